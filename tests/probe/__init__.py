"""The adversarial probe of the service (`python -m tests.probe.probe` from the checkout's
root): the hardening issues' cases against a disposable Neo4j and real `crase serve`
processes, each held or failed, with the app and the page drawing run in-process where a
case measures them. A test harness run by hand, since it needs the jars and takes
minutes; pytest collects nothing here."""
