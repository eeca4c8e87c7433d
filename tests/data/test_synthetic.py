"""The synthetic task's word orders (lsnmt.data.synthetic): a scrambled language writes every sentence of a length
in one fixed order of its own; scrambling changes nothing else (the lexicons, the other languages)."""

from __future__ import annotations

import numpy as np
import pytest

from lsnmt.data.synthetic import Task

LANGS = ("en", "de", "fr", "ru")


def test_a_scrambled_language_has_one_order_per_length() -> None:
    task = Task(languages=LANGS, concepts=20, reverse=("de",), scramble=("fr", "ru"), min_len=2, max_len=6, seed=3)
    rng = np.random.default_rng(0)
    for n in range(2, 7):
        assert sorted(task.orders["fr", n].tolist()) == list(range(n))  # a permutation of the positions
        for concepts in (rng.choice(20, size=n, replace=False) for _ in range(5)):
            words = task.lexicons[LANGS.index("fr")][concepts]
            assert task.render("fr", concepts) == words[task.orders["fr", n]].tolist()
            assert task.render("de", concepts) == task.lexicons[1][concepts][::-1].tolist()
    assert any(not np.array_equal(task.orders["fr", n], task.orders["ru", n]) for n in range(3, 7))
    assert any(not np.array_equal(task.orders["fr", n], np.arange(n)) for n in range(3, 7))


def test_scrambling_leaves_the_lexicons_and_the_other_languages_alone() -> None:
    plain = Task(languages=LANGS, concepts=20, reverse=("de",), seed=3)
    scrambled = Task(languages=LANGS, concepts=20, reverse=("de",), scramble=("ru",), seed=3)
    assert np.array_equal(plain.lexicons, scrambled.lexicons)
    concepts = np.array([4, 7, 1])
    for lang in ("en", "de", "fr"):
        assert plain.render(lang, concepts) == scrambled.render(lang, concepts)
    assert sorted(scrambled.render("ru", concepts)) == sorted(plain.render("ru", concepts))


def test_a_language_has_one_word_order() -> None:
    with pytest.raises(ValueError, match="'de' is both reversed and scrambled"):
        Task(languages=LANGS, reverse=("de",), scramble=("de",))
