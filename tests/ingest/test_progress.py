"""The load bar on stderr (crase.ingest.progress): plain periodic lines in a pipe or a log,
never a carriage return there."""

import io

from crase.ingest.progress import ProgressBar


def test_the_load_bar_in_a_pipe_has_no_carriage_return() -> None:
    stream = io.StringIO()
    bar = ProgressBar("papers", 1000, stream=stream, log_interval_s=0.0)
    bar.update(500, 10)
    bar.close()
    text = stream.getvalue()
    assert "\r" not in text and text.count("\n") == 2
    assert "50.0%" in text and "ETA" in text and "done in" in text
