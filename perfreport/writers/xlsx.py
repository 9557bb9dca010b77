"""The Office Open XML spreadsheet package, written directly (a zip of XML parts).

Chosen by measurement (``benchmarks/bench_workbook.py``, docs/benchmarks.md): openpyxl's
write-only mode without lxml spent ~20 µs a cell in Python object and XML-tree code; this module
writes each sheet's XML as text, ~1 µs a cell, with the same content. The parts and their order
follow ECMA-376 Part 1 (SpreadsheetML, §18): ``[Content_Types].xml``, the package and workbook
relationships, ``xl/workbook.xml`` (sheets, defined names for the autofilter and print titles),
``xl/styles.xml`` (number formats, the header font/fill/alignment), ``xl/sharedStrings.xml``
and one ``xl/worksheets/sheetN.xml`` per sheet whose children keep the schema's sequence
(sheetPr, dimension, sheetViews, sheetFormatPr, cols, sheetData, autoFilter,
conditionalFormatting, printOptions, pageMargins, pageSetup; CT_Worksheet, §18.3.1.99).

Text is always a shared-string cell (``t="s"``): a name starting with ``=`` is text, never a
formula; an empty text is no cell. Numbers are written with 16 significant digits (``%.16g``,
as openpyxl writes them; Excel keeps 15), booleans as ``t="b"``.
The output is deterministic (no timestamps), so the same report gives the same bytes.
"""

from __future__ import annotations

import re
import zipfile
from itertools import chain, repeat
import msgspec
from msgspec import field

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"
# number formats Excel knows by id (ECMA-376 §18.8.30): written by id, not declared
BUILTIN_FORMATS = {"General": 0, "0": 1, "0.00": 2, "#,##0": 3, "#,##0.00": 4}
HEADER_STYLE = 1  # cellXfs index of the header cells: bold, filled, wrapped at the top
CHUNK_ROWS = 4096  # rows of sheet XML built and written at a time
ZIP_LEVEL = 1  # deflate level: 6 costs ~3x the time for files ~10% smaller (benchmarks/bench_workbook.py)
_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
_NOT_XML = re.compile("[\ufffe\uffff]")  # not XML 1.0 characters; the C0/C1 controls are escaped before


def esc(s: str) -> str:
    return s.translate(_ESC)


def col_letter(i: int) -> str:
    """Column letters of 0-based column ``i`` (0 -> A, 26 -> AA)."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


class SheetPart(msgspec.Struct):
    """One worksheet: what :func:`write_package` needs, already laid out by the caller."""

    title: str
    header: list[str]
    columns: list[list]  # one list of values per header column, all n_rows long
    n_rows: int
    formats: list[str | None]  # per column: the number format of its numbers (None: General)
    widths: list[float]
    freeze: str = "B2"  # "B2": header row and first column; "A2": the header row
    bars: list[int] = field(default_factory=list)  # 0-based columns with a 0-100 data bar
    header_height: float | None = None


class Strings:
    """The shared-string table: each distinct text once, its index for every cell that shows it."""

    def __init__(self, clean):
        self.index: dict[str, int] = {}
        self.items: list[str] = []
        self.clean = clean  # raw text -> the text the cell shows (safe, within Excel's limit)

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.items)
            t = self.clean(s)
            if "\ufffe" in t or "\uffff" in t:
                t = _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", t)
            sp = ' xml:space="preserve"' if t[:1].isspace() or t[-1:].isspace() else ""
            t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # text: no quotes to escape
            self.items.append(f"<si><t{sp}>{t}</t></si>")
        return i

    def xml(self) -> str:
        n = len(self.items)
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<sst xmlns="{NS}" count="{n}" uniqueCount="{n}">{"".join(self.items)}</sst>'


class Styles:
    """cellXfs: 0 default, 1 header, then one per number format used."""

    def __init__(self):
        self.by_fmt: dict[str, int] = {}
        self.custom: dict[str, int] = {}

    def style(self, fmt: str | None) -> int:
        if fmt is None or fmt == "General":
            return 0
        s = self.by_fmt.get(fmt)
        if s is None:
            if fmt not in BUILTIN_FORMATS:
                self.custom[fmt] = 164 + len(self.custom)  # ids below 164 are Excel's own
            s = self.by_fmt[fmt] = 2 + len(self.by_fmt)
        return s

    def xml(self) -> str:
        nf = "".join(f'<numFmt numFmtId="{i}" formatCode="{esc(f)}"/>' for f, i in self.custom.items())
        xfs = ['<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>']
        xfs.append(
            '<xf numFmtId="0" fontId="1" fillId="2" borderId="0" xfId="0" applyFont="1" applyFill="1" '
            'applyAlignment="1"><alignment vertical="top" wrapText="1"/></xf>'
        )
        for f in self.by_fmt:
            i = BUILTIN_FORMATS.get(f, self.custom.get(f))
            xfs.append(f'<xf numFmtId="{i}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>')
        font = '<sz val="11"/><name val="Calibri"/><family val="2"/>'
        return (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<styleSheet xmlns="{NS}">'
            + (f'<numFmts count="{len(self.custom)}">{nf}</numFmts>' if self.custom else "")
            + f'<fonts count="2"><font>{font}</font><font><b/>{font}</font></fonts>'
            '<fills count="3"><fill><patternFill patternType="none"/></fill>'
            '<fill><patternFill patternType="gray125"/></fill>'
            '<fill><patternFill patternType="solid"><fgColor rgb="FFDDEBF7"/><bgColor indexed="64"/></patternFill></fill>'
            "</fills>"
            '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
            '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
            f'<cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
            '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
            "</styleSheet>"
        )


def _pane(freeze: str) -> str:
    if freeze == "A2":
        return (
            '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
            '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/>'
        )
    return (
        '<pane xSplit="1" ySplit="1" topLeftCell="B2" activePane="bottomRight" state="frozen"/>'
        '<selection pane="topRight"/><selection pane="bottomLeft"/>'
        '<selection pane="bottomRight" activeCell="B2" sqref="B2"/>'
    )


def _cell(L: str, n: int, s: str, v, strings: Strings) -> str:
    """One cell's XML ("" for no cell: None or an empty text)."""
    t = type(v)
    if t is str:
        return f'<c r="{L}{n}" t="s"><v>{strings(v)}</v></c>' if v else ""  # an empty text is no cell
    if t is float or t is int:
        return f'<c r="{L}{n}"{s}><v>{v:.16g}</v></c>'
    if v is None:
        return ""
    if isinstance(v, bool):
        return f'<c r="{L}{n}" t="b"><v>{int(v)}</v></c>'
    if isinstance(v, (int, float)):
        return f'<c r="{L}{n}"{s}><v>{v:.16g}</v></c>'
    return f'<c r="{L}{n}" t="s"><v>{strings(str(v))}</v></c>'


_NUMBERS, _NUMBERS_OR_NONE, _TEXT_OR_NONE = {float, int}, {float, int, type(None)}, {str, type(None)}


def _column(L: str, s: str, col: list, r0: int, types: set, strings: Strings) -> list[str]:
    """The cells of one column (rows r0, r0 + 1, ...); a column of numbers or of text is one
    comprehension without a call per cell, the same text as :func:`_cell` gives."""
    if types <= _NUMBERS:
        return [f'<c r="{L}{n}"{s}><v>{v:.16g}</v></c>' for n, v in enumerate(col, r0)]
    if types <= _NUMBERS_OR_NONE:
        return ["" if v is None else f'<c r="{L}{n}"{s}><v>{v:.16g}</v></c>' for n, v in enumerate(col, r0)]
    if types <= _TEXT_OR_NONE:
        idx = strings.index  # every text is in it already (:func:`_cells`)
        return [f'<c r="{L}{n}" t="s"><v>{idx[v]}</v></c>' if v else "" for n, v in enumerate(col, r0)]
    return [_cell(L, n, s, v, strings) for n, v in enumerate(col, r0)]


def _cells(sp: SheetPart, strings: Strings, styles: Styles):
    """The sheetData rows as text, in chunks of a few thousand rows, built column by column.
    The shared strings are numbered in the order the cells read (row by row), so the bytes are
    those a cell-by-cell writer gives."""
    letters = [col_letter(i) for i in range(len(sp.header))]
    ht = f' ht="{sp.header_height:g}" customHeight="1"' if sp.header_height else ""
    head = "".join(f'<c r="{L}1" s="{HEADER_STYLE}" t="s"><v>{strings(h)}</v></c>' for L, h in zip(letters, sp.header))
    yield f'<row r="1"{ht}>{head}</row>'
    st = [f' s="{styles.style(f)}"' if f is not None else "" for f in sp.formats]
    for a in range(0, sp.n_rows, CHUNK_ROWS):
        b = min(a + CHUNK_ROWS, sp.n_rows)
        cols = [c[a:b] for c in sp.columns]
        types = [set(map(type, c)) for c in cols]
        texts = [c for c, t in zip(cols, types) if not t <= _NUMBERS_OR_NONE]
        if texts:  # number every text in reading order first
            idx = strings.index
            for v in chain.from_iterable(zip(*texts)) if len(texts) > 1 else texts[0]:
                t = type(v)
                if t is str:
                    if v and v not in idx:
                        strings(v)
                elif t is not float and t is not int and v is not None and not isinstance(v, (bool, int, float)):
                    strings(str(v))
        parts = [[f'<row r="{n}">' for n in range(a + 2, b + 2)]]
        parts += [_column(L, s, c, a + 2, t, strings) for L, s, c, t in zip(letters, st, cols, types)]
        parts.append(repeat("</row>", b - a))
        yield "".join(chain.from_iterable(zip(*parts)))


def _sheet_xml(sp: SheetPart, strings: Strings, styles: Styles, selected: bool):
    last = col_letter(max(len(sp.header), 1) - 1)
    ref = f"A1:{last}{sp.n_rows + 1}"
    cols = "".join(f'<col min="{i}" max="{i}" width="{w:g}" customWidth="1"/>' for i, w in enumerate(sp.widths, 1))
    tab = ' tabSelected="1"' if selected else ""
    yield (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<worksheet xmlns="{NS}" xmlns:r="{NS_R}">'
        '<sheetPr><outlinePr summaryBelow="1" summaryRight="1"/><pageSetUpPr fitToPage="1"/></sheetPr>'
        f'<dimension ref="{ref}"/>'
        f"<sheetViews><sheetView{tab} workbookViewId=\"0\">"
        f"{_pane(sp.freeze)}</sheetView></sheetViews>"
        '<sheetFormatPr baseColWidth="8" defaultRowHeight="15"/>'
        + (f"<cols>{cols}</cols>" if cols else "")
        + "<sheetData>"
    )
    yield from _cells(sp, strings, styles)
    tail = ["</sheetData>"]
    if sp.header:
        tail.append(f'<autoFilter ref="{ref}"/>')
    for k, c in enumerate(sp.bars, 1):
        L = col_letter(c)
        tail.append(
            f'<conditionalFormatting sqref="{L}2:{L}{sp.n_rows + 1}"><cfRule type="dataBar" priority="{k}">'
            '<dataBar><cfvo type="num" val="0"/><cfvo type="num" val="100"/><color rgb="FF5B9BD5"/></dataBar>'
            "</cfRule></conditionalFormatting>"
        )
    tail.append(
        '<printOptions/><pageMargins left="0.5" right="0.5" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>'
        '<pageSetup orientation="landscape" fitToWidth="1" fitToHeight="0"/></worksheet>'
    )
    yield "".join(tail)


def _quote(title: str) -> str:
    return "'" + title.replace("'", "''") + "'"


def _workbook_xml(parts: list[SheetPart]) -> str:
    sheets = "".join(f'<sheet name="{esc(p.title)}" sheetId="{i}" r:id="rId{i}"/>' for i, p in enumerate(parts, 1))
    names = []
    for i, p in enumerate(parts):
        q = _quote(esc(p.title))
        if p.header:
            last = col_letter(len(p.header) - 1)
            names.append(
                f'<definedName name="_xlnm._FilterDatabase" localSheetId="{i}" hidden="1">'
                f"{q}!$A$1:${last}${p.n_rows + 1}</definedName>"
            )
        titles = f"{q}!$A:$A,{q}!$1:$1" if p.freeze == "B2" else f"{q}!$1:$1"  # printed on every page
        names.append(f'<definedName name="_xlnm.Print_Titles" localSheetId="{i}">{titles}</definedName>')
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<workbook xmlns="{NS}" xmlns:r="{NS_R}">'
        '<workbookPr/><bookViews><workbookView activeTab="0"/></bookViews>'
        f"<sheets>{sheets}</sheets><definedNames>{''.join(names)}</definedNames>"
        '<calcPr calcId="191029"/></workbook>'
    )


def _package_parts(n: int) -> dict[str, str]:
    head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    over = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{CT}.worksheet+xml"/>' for i in range(1, n + 1)
    )
    types = (
        f'{head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{CT}.sheet.main+xml"/>'
        f'<Override PartName="/xl/styles.xml" ContentType="{CT}.styles+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{CT}.sharedStrings+xml"/>'
        f"{over}"
        '<Override PartName="/docProps/app.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>'
        "</Types>"
    )
    rel = f"{NS_R}/"
    rels = (
        f'{head}<Relationships xmlns="{NS_PKG}">'
        f'<Relationship Id="rId1" Type="{rel}officeDocument" Target="xl/workbook.xml"/>'
        f'<Relationship Id="rId2" Type="{rel}extended-properties" Target="docProps/app.xml"/>'
        "</Relationships>"
    )
    wb_rels = "".join(
        f'<Relationship Id="rId{i}" Type="{rel}worksheet" Target="worksheets/sheet{i}.xml"/>' for i in range(1, n + 1)
    )
    wb_rels = (
        f'{head}<Relationships xmlns="{NS_PKG}">{wb_rels}'
        f'<Relationship Id="rId{n + 1}" Type="{rel}styles" Target="styles.xml"/>'
        f'<Relationship Id="rId{n + 2}" Type="{rel}sharedStrings" Target="sharedStrings.xml"/>'
        "</Relationships>"
    )
    app = (
        f'{head}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
        "<Application>perfreport</Application></Properties>"
    )
    return {
        "[Content_Types].xml": types,
        "_rels/.rels": rels,
        "xl/_rels/workbook.xml.rels": wb_rels,
        "docProps/app.xml": app,
    }


def _member(name: str) -> zipfile.ZipInfo:
    """A deflated zip member with a fixed date, so the same workbook gives the same bytes."""
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_DEFLATED
    zi._compresslevel = ZIP_LEVEL  # what ZipFile.open(zinfo, "w") reads (from 3.13 an alias of compress_level)
    return zi


def write_package(path, parts: list[SheetPart], clean) -> None:
    """Write the workbook of ``parts`` to ``path`` (a new file). ``clean(text)`` gives the text a
    cell shows (:func:`perfreport.writers.cells.excel_text` without the cut flag)."""
    strings, styles = Strings(clean), Styles()
    with zipfile.ZipFile(path, "w") as z:
        for name, xml in _package_parts(len(parts)).items():
            z.writestr(_member(name), xml)
        for i, sp in enumerate(parts, 1):
            with z.open(_member(f"xl/worksheets/sheet{i}.xml"), "w") as f:
                for chunk in _sheet_xml(sp, strings, styles, i == 1):
                    f.write(chunk.encode())
        z.writestr(_member("xl/workbook.xml"), _workbook_xml(parts))
        z.writestr(_member("xl/styles.xml"), styles.xml())
        z.writestr(_member("xl/sharedStrings.xml"), strings.xml())
