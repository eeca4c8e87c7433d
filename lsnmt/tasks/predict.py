"""Predictions of a fine-tuned task model: NER tags per word, QA answer spans per question; dev F1 for
``select: best``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lsnmt.tasks.batches import collate
from lsnmt.tasks.config import TaskConfig
from lsnmt.tasks.features import best_span, ner_tags
from models.lang import LangContext
from models.xlmr import TaskModel


@torch.no_grad()
def predict(
    model: TaskModel,
    task: TaskConfig,
    rows_by_lang: dict[str, list[dict]],
    route: str,
    gold: dict[str, dict[str, Any]] | None,
    device: torch.device,
) -> dict[str, Any]:
    """NER: ``{lang: [[tag per word] per sentence]}``; QA: ``{lang: {qid: answer text}}``."""
    model.eval()
    out: dict[str, Any] = {}
    for lid, lang in enumerate(task.languages):
        rows = rows_by_lang.get(lang, [])
        preds: Any = [] if task.kind == "ner" else {}
        best: dict[str, Any] = {}
        for i in range(0, len(rows), task.eval_batch_size):
            chunk = rows[i : i + task.eval_batch_size]
            batch = collate([{"ids": r["ids"]} for r in chunk], device)
            langs = LangContext.single(lid, lid, len(chunk), device)
            langs = langs if route == "none" else langs.with_(route=route)
            logits = model(batch["input_ids"], batch["attention_mask"], langs).float().cpu()
            for r, lg in zip(chunk, logits, strict=True):
                if task.kind == "ner":
                    preds.append(ner_tags(lg, r["first"]))
                    continue
                span = best_span(
                    lg[:, 0],
                    lg[:, 1],
                    r["offsets"] + [None] * (lg.shape[0] - len(r["offsets"])),
                    n_best=task.n_best,
                    max_answer_length=task.max_answer_length,
                )
                if span is not None and (r["qid"] not in best or span.score > best[r["qid"]].score):
                    best[r["qid"]] = span
        if task.kind == "qa":
            assert gold is not None
            preds = {
                qid: (g["context"][best[qid].start : best[qid].end] if qid in best else "")
                for qid, g in gold[lang].items()
            }
        out[lang] = preds
    return out


def dev_f1(preds: dict[str, list[list[str]]], rows_by_lang: dict[str, list[dict]]) -> float:
    """Mean over languages of the span F1 on the dev set (model selection, ``select: best``)."""
    from lsnmt.tasks.metrics import span_f1

    return float(np.mean([span_f1([r["tags"] for r in rows_by_lang[lang]], p) for lang, p in preds.items()]))
