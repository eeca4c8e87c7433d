"""t-SNE of encoder sentence embeddings, one panel per language group (CLM Sec. 5.2.2, Figures 3, 5, 6).

CLM reduces the 512-d mean-pooled encoder outputs of the Flores devtest
sentences (xx-en encoders) to 2-d with t-SNE (van der Maaten and Hinton 2008)
and draws the 74 non-English languages in three figures, Low / Med / High.
Here each group of ``groups`` is one panel with its own t-SNE, points coloured
by language; languages without a group go to ``other``. Sentences of one
meaning clustering across languages indicate language-agnostic representations.

Deterministic bytes: scikit-learn's TSNE with PCA initialisation and a fixed
``random_state``, matplotlib's Agg canvas without pyplot, and PNG metadata without
the ``Software`` entry (no timestamp is written), so DVC hashes stay stable.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from lsnmt.figures import save_pdf, save_png


def tsne_2d(x: np.ndarray, seed: int, perplexity: float = 30.0) -> np.ndarray:
    """``(N, d) -> (N, 2)``; perplexity is capped below N as scikit-learn requires."""
    perp = min(perplexity, max(1.0, (len(x) - 1) / 3))
    from sklearn.manifold import TSNE  # lazy: 1 s of imports that the search and evaluate stages rarely need
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    with threadpool_limits(limits=1):  # one OpenMP / BLAS thread: the same floats whatever OMP_NUM_THREADS says
        return TSNE(n_components=2, perplexity=perp, init="pca", random_state=seed, n_jobs=1).fit_transform(x)


def panels(embeddings: Mapping[str, np.ndarray], groups: Mapping[str, str]) -> dict[str, list[str]]:
    """Group -> its languages (sorted); ``other`` for languages without a group."""
    out: dict[str, list[str]] = {}
    for lang in sorted(embeddings):
        out.setdefault(groups.get(lang, "other"), []).append(lang)
    return dict(sorted(out.items()))


def colour_list(n: int) -> list[tuple[float, ...]]:
    """``n`` distinguishable colours: tab10 / tab20, or evenly spaced on turbo beyond 20 (CLM's High: 41)."""
    if n <= 20:
        cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
        return [tuple(cmap(i)) for i in range(n)]
    return [tuple(c) for c in matplotlib.colormaps["turbo"](np.linspace(0.0, 1.0, n))]


def draw(embeddings: Mapping[str, np.ndarray], groups: Mapping[str, str], title: str, seed: int,
         perplexity: float = 30.0) -> Figure:
    """One t-SNE panel per group, coloured by language."""
    cols = panels(embeddings, groups)
    fig = Figure(figsize=(5 * len(cols), 5), dpi=100)
    FigureCanvasAgg(fig)
    for k, (group, langs) in enumerate(cols.items()):
        ax = fig.add_subplot(1, len(cols), k + 1)
        xy = tsne_2d(np.concatenate([embeddings[lang] for lang in langs]), seed, perplexity)
        colours = colour_list(len(langs))
        start = 0
        for lang, colour in zip(langs, colours, strict=True):
            n = len(embeddings[lang])
            ax.scatter(xy[start:start + n, 0], xy[start:start + n, 1], s=6, label=lang, color=colour)
            start += n
        ax.set_title(f"{title}: {group} ({len(langs)} language{'s' if len(langs) > 1 else ''})")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.legend(fontsize=6, markerscale=2, ncol=2 if len(langs) > 10 else 1)
    fig.tight_layout()
    return fig


def plot_tsne(embeddings: Mapping[str, np.ndarray], groups: Mapping[str, str], path: Path, *, title: str,
              seed: int, perplexity: float = 30.0) -> Path:
    """Draw and save the figure as ``path`` (PNG) and the same name with ``.pdf``; return ``path``."""
    fig = draw(embeddings, groups, title, seed, perplexity)
    save_png(fig, path)
    save_pdf(fig, path.with_suffix(".pdf"))
    return path
