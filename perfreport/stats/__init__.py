"""Statistics shared by passes and models (below both: imports neither).

* :mod:`.iteration_registry` / :mod:`.iteration_formats`: serving engines' iteration-annotation formats (the registry; each cited form) -> chunk statistics
  (written by the "iteration annotations" pass into ``perf_meta["iteration"]``);
* :mod:`.chunks`: reading those statistics back in a model (:func:`chunk_stats`), and the
  sliding-window key counts derived from them.
"""
