"""The web pages: server-rendered HTML over the same functions the JSON API calls (the
search and idea forms, a run with its results and evidence, the evidence graph drawn as
SVG by year, an idea run's audit summary, the runs list), their templates and their own
small CSS and JavaScript. Mounted by `crase.api.routes.pages`."""
