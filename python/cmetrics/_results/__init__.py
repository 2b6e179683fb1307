"""The result objects: :class:`~cmetrics.Report` (every metric of one evaluation) and
:class:`~cmetrics.GroupedReport` (one report per group), with their text, Markdown and JSON
forms."""
