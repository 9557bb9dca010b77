"""The time-axis timeline's script (one constant string: the page's Content-Security-Policy
allows it by its SHA-256 hash). It reads the JSON data block ``#tl-data`` (no script of its own:
a ``type="application/json"`` block is never executed) and draws on ``#tl-canvas``: a time
ruler, a steps row, one row per lane, one idle row per GPU. Wheel zooms about the cursor, drag
pans, double-click resets; hover shows the block under the cursor (name, op, category, start,
duration, step) in ``#tl-tip``. The canvas carries the visible range (``data-v0``/``data-v1``,
µs from the origin) and the blocks drawn (``data-drawn``) after every draw."""

from __future__ import annotations

LABEL_W, RULER_H, STEP_H, LANE_H, IDLE_H = 170, 24, 18, 18, 10

_JS = r"""
(function(){
  var box=document.getElementById('tl'), blob=document.getElementById('tl-data');
  if(!box||!blob){return;}
  var D=JSON.parse(blob.textContent), cv=document.getElementById('tl-canvas');
  var tip=document.getElementById('tl-tip'), ctx=cv.getContext('2d');
  var LW=@LW@, RH=@RH@, SH=@SH@, LH=@LH@, IH=@IH@, US='\u00b5s';
  var span=D.span, v0=0, v1=span, MIN=Math.min(span,0.01), rows=[], y=RH, drag=null;
  if(D.steps.length){rows.push({type:'steps',y:y,h:SH,label:'steps ('+D.steps[0].source+')'});y+=SH+2;}
  var devs=[], idleBy={};
  D.lanes.forEach(function(l){if(devs.indexOf(l.device)<0){devs.push(l.device);}});
  D.idle.forEach(function(r){idleBy[r.device]=r;if(devs.indexOf(r.device)<0){devs.push(r.device);}});
  devs.forEach(function(dv){
    D.lanes.forEach(function(l){if(l.device===dv){rows.push({type:'lane',y:y,h:LH,r:l,label:l.label});y+=LH;}});
    if(idleBy[dv]){rows.push({type:'idle',y:y,h:IH,r:idleBy[dv],label:'GPU '+dv+' idle'});y+=IH;}
    y+=6;
  });
  var H=y;
  rows.forEach(function(w){if(w.r){var m=0,d=w.r.d;for(var i=0;i<d.length;i++){if(d[i]>m){m=d[i];}}w.maxd=m;}});
  function pw(){return Math.max(10,cv.clientWidth-LW-8);}
  function X(t){return LW+(t-v0)/(v1-v0)*pw();}
  function T(x){return v0+(x-LW)/pw()*(v1-v0);}
  function first(s,t){var lo=0,hi=s.length;while(lo<hi){var m=(lo+hi)>>1;if(s[m]<t){lo=m+1;}else{hi=m;}}return lo;}
  function num(v){return String(parseFloat(v.toPrecision(4)));}
  function fmt(us){var a=Math.abs(us);
    if(a>=1e6){return num(us/1e6)+' s';} if(a>=1e3){return num(us/1e3)+' ms';} return num(us)+' '+US;}
  function nice(x){var p=Math.pow(10,Math.floor(Math.log(x)/Math.LN10)),m=x/p;
    return (m<1.5?1:m<3.5?2:m<7.5?5:10)*p;}
  function draw(){
    var W=cv.clientWidth, r=window.devicePixelRatio||1, P=pw(), n=0;
    cv.style.height=H+'px'; cv.width=Math.round(W*r); cv.height=Math.round(H*r);
    ctx.setTransform(r,0,0,r,0,0); ctx.clearRect(0,0,W,H);
    ctx.font='11px sans-serif'; ctx.textBaseline='middle';
    var st=nice((v1-v0)/8), t=Math.ceil(v0/st)*st;
    ctx.strokeStyle='#e4e4e4'; ctx.fillStyle='#444'; ctx.textAlign='center';
    for(;t<=v1;t+=st){var x=Math.round(X(t))+0.5;ctx.beginPath();ctx.moveTo(x,RH-6);ctx.lineTo(x,H);ctx.stroke();
      ctx.fillText(fmt(t),Math.min(Math.max(x,LW+20),LW+P-20),9);}
    ctx.textAlign='left'; ctx.fillStyle='#222';
    rows.forEach(function(w){var s=w.label;if(s.length>26){s=s.slice(0,25)+'\u2026';}ctx.fillText(s,4,w.y+w.h/2);});
    ctx.save(); ctx.beginPath(); ctx.rect(LW,0,P,H); ctx.clip();
    D.steps.forEach(function(s,i){var x0=X(s.s),x1=X(s.s+s.d);if(x1<LW||x0>LW+P){return;}
      ctx.fillStyle=i%2?'rgba(80,80,170,0.05)':'rgba(80,80,170,0.11)'; ctx.fillRect(x0,RH,Math.max(1,x1-x0),H-RH);
      ctx.fillStyle=s.verdict?'#9c4f96':'#7f7fc4'; ctx.fillRect(x0,rows[0].y+2,Math.max(1,x1-x0-1),SH-4);
      ctx.fillStyle='#3a3a8c'; ctx.fillRect(Math.round(x0),RH,1,H-RH);
      if(x1-x0>40){ctx.fillStyle='#fff';ctx.fillText('step '+s.number,Math.max(x0,LW)+3,rows[0].y+SH/2);}});
    rows.forEach(function(w){if(!w.r){return;}
      var L=w.r,s=L.s,d=L.d,b=L.b,cols=w.type==='lane'?D.colours:D.idle_colours,c=w.type==='lane'?L.c:L.kind;
      for(var i=first(s,v0-w.maxd);i<s.length&&s[i]<=v1;i++){var x0=X(s[i]),x1=X(s[i]+d[i]);if(x1<LW){continue;}
        ctx.globalAlpha=b&&d[i]>0?Math.max(0.3,b[i]/d[i]):1; ctx.fillStyle=cols[c[i]];
        ctx.fillRect(x0,w.y+2,Math.max(1,x1-x0),w.h-4); n++;}
      ctx.globalAlpha=1;});
    ctx.restore();
    cv.setAttribute('data-v0',String(v0)); cv.setAttribute('data-v1',String(v1)); cv.setAttribute('data-drawn',String(n));
  }
  function laneText(L,i){var n=L.n?L.n[i]:1,out=[];
    if(n>1){out.push(n+' events merged (starts within one '+fmt(D.bin_us)+' bin): busy '+fmt(L.b[i])+' of '+fmt(L.d[i]));
      out.push('longest of them:');}
    out.push(D.names[L.k[i]],'op: '+D.ops[L.o[i]],'category: '+D.cats[L.c[i]]);
    out.push((n>1?'block: ':'')+'start '+fmt(L.s[i])+', duration '+fmt(L.d[i]));
    var k=L.t[i]; out.push(k>=0?'step '+D.steps[k].number+' ('+D.steps[k].label+')':'step: none');
    out.push(L.label); return out;}
  var WHY=['nothing queued: the GPU waited for the CPU','work queued, waiting on a dependency','closing event launched outside the trace'];
  function idleText(L,i){var k=L.kind[i],t=L.b?L.b[i]:L.d[i];
    return [D.kinds[k]+': '+fmt(t)+(L.b&&t<L.d[i]?' in '+fmt(L.d[i]):''),WHY[k],'start '+fmt(L.s[i]),'GPU '+L.device];}
  function stepText(s){var out=['step '+s.number+': '+s.label+' ('+s.source+')','start '+fmt(s.s)+', step time '+fmt(s.d),
      'GPU busy '+fmt(s.busy)+', host wait '+fmt(s.host)+(s.d>0?' ('+Math.round(100*s.host/s.d)+'%)':'')];
    if(s.kind){out.push(s.kind);} if(s.verdict){out.push(s.verdict);} if(s.note){out.push(s.note);} return out;}
  function hit(ev){var rc=cv.getBoundingClientRect(),x=ev.clientX-rc.left,y=ev.clientY-rc.top,w=null;
    if(x<LW){return null;}
    rows.forEach(function(q){if(y>=q.y&&y<q.y+q.h){w=q;}}); if(!w){return null;}
    var t=T(x),tol=3*(v1-v0)/pw(),i;
    if(w.type==='steps'){for(i=0;i<D.steps.length;i++){var s=D.steps[i];if(t>=s.s-tol&&t<=s.s+s.d+tol){return stepText(s);}}return null;}
    var L=w.r,S=L.s,d=L.d,best=-1,bd=Infinity;
    for(i=first(S,t+tol)-1;i>=0&&S[i]>=t-tol-w.maxd;i--){
      var e=t<S[i]?S[i]-t:(t>S[i]+d[i]?t-S[i]-d[i]:0); if(e<=tol&&e<bd){bd=e;best=i;if(e===0){break;}}}
    if(best<0){return null;}
    return w.type==='lane'?laneText(L,best):idleText(L,best);}
  function hover(ev){var h=hit(ev);if(!h){tip.hidden=true;return;}
    tip.textContent=h.join('\n'); tip.hidden=false;
    tip.style.left=Math.min(ev.clientX+14,window.innerWidth-tip.offsetWidth-4)+'px'; tip.style.top=(ev.clientY+14)+'px';}
  function clamp(w){if(v0<0){v0=0;} if(v0+w>span){v0=span-w;} if(v0<0){v0=0;} v1=v0+w;}
  cv.addEventListener('wheel',function(ev){ev.preventDefault();var rc=cv.getBoundingClientRect();
    var t=T(Math.max(LW,ev.clientX-rc.left)),w=Math.min(span,Math.max(MIN,(v1-v0)*(ev.deltaY<0?0.8:1.25)));
    v0=t-(t-v0)*w/(v1-v0); clamp(w); draw(); hover(ev);},{passive:false});
  cv.addEventListener('mousedown',function(ev){drag={x:ev.clientX,v:v0};tip.hidden=true;ev.preventDefault();});
  window.addEventListener('mouseup',function(){drag=null;});
  window.addEventListener('mousemove',function(ev){if(!drag){return;}
    var w=v1-v0; v0=drag.v-(ev.clientX-drag.x)/pw()*w; clamp(w); draw();});
  cv.addEventListener('mousemove',function(ev){if(!drag){hover(ev);}});
  cv.addEventListener('mouseleave',function(){tip.hidden=true;});
  cv.addEventListener('dblclick',function(){v0=0;v1=span;draw();});
  window.addEventListener('resize',draw);
  draw(); box.setAttribute('data-ready','1');
})();
"""

TIMELINE_SCRIPT = (
    _JS.replace("@LW@", str(LABEL_W))
    .replace("@RH@", str(RULER_H))
    .replace("@SH@", str(STEP_H))
    .replace("@LH@", str(LANE_H))
    .replace("@IH@", str(IDLE_H))
)

__all__ = ["TIMELINE_SCRIPT", "LABEL_W", "RULER_H", "STEP_H", "LANE_H", "IDLE_H"]
