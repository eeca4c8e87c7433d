"""Write the synthetic NER / QA fixtures of ``embedded/tasks`` (see its PROVENANCE.md). Run once; output committed.

    .venv/bin/python scripts/make_task_fixtures.py [--out embedded/tasks]

The sentences come from the hand-written templates and names below, never from WikiANN or TyDiQA; the
files have those datasets' exact formats (Rahimi et al.'s WikiANN split files, TyDiQA-GoldP v1.1 JSON).
Deterministic (a fixed ``random.Random``), so re-running reproduces the committed bytes.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "embedded" / "tasks"

# -- WikiANN-format NER: per language, templates (tokens, {PER}/{ORG}/{LOC} slots) and entity names ----------

NER: dict[str, dict[str, list[str]]] = {
    "en": {
        "templates": ["{PER} was born in {LOC} .", "{PER} works for {ORG} .", "{ORG} is based in {LOC} .",
                      "{PER} moved to {LOC} in 1998 .", "The report of {ORG} was written by {PER} .",
                      "{LOC} is a city ."],
        "PER": ["Maria Silva", "John Smith", "Ahmed Khan", "Anna Kowalska", "Li Wei", "Peter"],
        "ORG": ["United Nations", "Red Cross", "Nokia", "World Bank", "Oxford University"],
        "LOC": ["Paris", "New York", "Lagos", "Lima", "Hanoi", "Cape Town"],
    },
    "fr": {
        "templates": ["{PER} est né à {LOC} .", "{PER} travaille pour {ORG} .", "{ORG} a son siège à {LOC} .",
                      "{PER} a déménagé à {LOC} en 1998 .", "Le rapport de {ORG} a été écrit par {PER} .",
                      "{LOC} est une ville ."],
        "PER": ["Marie Dubois", "Jean Martin", "Claire Petit", "Louis Moreau", "Sophie"],
        "ORG": ["Nations unies", "Croix-Rouge", "Banque mondiale", "Université de Lyon", "Renault"],
        "LOC": ["Paris", "Lyon", "Marseille", "Genève", "Montréal", "Dakar"],
    },
    "tr": {
        "templates": ["{PER} , {LOC} şehrinde doğdu .", "{PER} , {ORG} için çalışıyor .",
                      "{ORG} merkezi {LOC} şehrindedir .", "{PER} 1998 yılında {LOC} şehrine taşındı .",
                      "{ORG} raporunu {PER} yazdı .", "{LOC} bir şehirdir ."],
        "PER": ["Ayşe Yılmaz", "Mehmet Demir", "Elif Kaya", "Can Öztürk", "Zeynep"],
        "ORG": ["Birleşmiş Milletler", "Kızılay", "Dünya Bankası", "Ankara Üniversitesi", "Arçelik"],
        "LOC": ["İstanbul", "Ankara", "İzmir", "Bursa", "Trabzon", "Konya"],
    },
    "vi": {
        "templates": ["{PER} sinh ra tại {LOC} .", "{PER} làm việc cho {ORG} .", "{ORG} có trụ sở tại {LOC} .",
                      "{PER} chuyển đến {LOC} năm 1998 .", "Báo cáo của {ORG} do {PER} viết .",
                      "{LOC} là một thành phố ."],
        "PER": ["Nguyễn Văn An", "Trần Thị Bình", "Lê Minh", "Phạm Thu Hà", "Hoàng"],
        "ORG": ["Liên Hợp Quốc", "Ngân hàng Thế giới", "Vietnam Airlines", "Đại học Huế", "Hội Chữ thập đỏ"],
        "LOC": ["Hà Nội", "Huế", "Đà Nẵng", "Sài Gòn", "Cần Thơ", "Hải Phòng"],
    },
    "zh": {  # WikiANN writes Chinese one character per token
        "templates": ["{PER}出生于{LOC}。", "{PER}在{ORG}工作。", "{ORG}总部位于{LOC}。", "{PER}一九九八年搬到{LOC}。",
                      "{ORG}的报告由{PER}撰写。", "{LOC}是一座城市。"],
        "PER": ["李白", "王芳", "张伟", "刘洋", "陈静"],
        "ORG": ["联合国", "世界银行", "清华大学", "红十字会", "中国银行"],
        "LOC": ["北京", "上海", "广州", "西安", "成都", "南京"],
    },
}
NER_SIZES = {"train": 24, "dev": 8, "test": 8}


def _tokens(text: str, lang: str) -> list[str]:
    return list(text) if lang == "zh" else text.split()


def ner_sentence(lang: str, rng: random.Random) -> list[tuple[str, str]]:
    spec = NER[lang]
    template = rng.choice(spec["templates"])
    out: list[tuple[str, str]] = []
    rest = template
    while rest:
        start = rest.find("{")
        if start < 0:
            out += [(t, "O") for t in _tokens(rest, lang)]
            break
        out += [(t, "O") for t in _tokens(rest[:start], lang)]
        kind = rest[start + 1:rest.index("}")]
        name = _tokens(rng.choice(spec[kind]), lang)
        out += [(t, ("B-" if i == 0 else "I-") + kind) for i, t in enumerate(name)]
        rest = rest[rest.index("}") + 1:]
    return out


def write_ner(out: Path) -> None:
    rng = random.Random(0)
    for lang in NER:
        for split, n in NER_SIZES.items():
            path = out / "wikiann" / lang / split
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = []
            for _ in range(n):
                lines += [f"{lang}:{tok}\t{tag}" for tok, tag in ner_sentence(lang, rng)] + [""]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- TyDiQA-GoldP-format QA: capitals and rivers, two questions per passage ------------------------------------

FACTS = {  # city, country, river per language
    "en": [("Paris", "France", "Seine"), ("Budapest", "Hungary", "Danube"), ("Cairo", "Egypt", "Nile"),
           ("London", "the United Kingdom", "Thames"), ("Vienna", "Austria", "Danube"),
           ("Bangkok", "Thailand", "Chao Phraya"), ("Baghdad", "Iraq", "Tigris"), ("Kyiv", "Ukraine", "Dnipro")],
    "fi": [("Pariisi", "Ranska", "Seine"), ("Budapest", "Unkari", "Tonava"), ("Kairo", "Egypti", "Niili"),
           ("Lontoo", "Iso-Britannia", "Thames"), ("Wien", "Itävalta", "Tonava"), ("Bangkok", "Thaimaa", "Chao Phraya"),
           ("Bagdad", "Irak", "Tigris"), ("Kiova", "Ukraina", "Dnepr")],
    "id": [("Paris", "Prancis", "Seine"), ("Budapest", "Hongaria", "Donau"), ("Kairo", "Mesir", "Nil"),
           ("London", "Inggris", "Thames"), ("Wina", "Austria", "Donau"), ("Bangkok", "Thailand", "Chao Phraya"),
           ("Bagdad", "Irak", "Tigris"), ("Kyiv", "Ukraina", "Dnipro")],
    "sw": [("Paris", "Ufaransa", "Seine"), ("Budapest", "Hungaria", "Danube"), ("Kairo", "Misri", "Nile"),
           ("London", "Uingereza", "Thames"), ("Vienna", "Austria", "Danube"), ("Bangkok", "Tailandi", "Chao Phraya"),
           ("Baghdad", "Iraki", "Tigris"), ("Kyiv", "Ukraine", "Dnipro")],
    "ko": [("파리", "프랑스", "센"), ("부다페스트", "헝가리", "도나우"), ("카이로", "이집트", "나일"),
           ("런던", "영국", "템스"), ("빈", "오스트리아", "도나우"), ("방콕", "태국", "짜오프라야"),
           ("바그다드", "이라크", "티그리스"), ("키이우", "우크라이나", "드니프로")],
    "bn": [("প্যারিস", "ফ্রান্স", "সেন"), ("বুদাপেস্ট", "হাঙ্গেরি", "দানিউব"), ("কায়রো", "মিশর", "নীল"),
           ("লন্ডন", "যুক্তরাজ্য", "টেমস"), ("ভিয়েনা", "অস্ট্রিয়া", "দানিউব"), ("ব্যাংকক", "থাইল্যান্ড", "চাও ফ্রায়া"),
           ("বাগদাদ", "ইরাক", "টাইগ্রিস"), ("কিয়েভ", "ইউক্রেন", "দনিপ্রো")],
}
PASSAGE = {
    "en": ("{city} is the capital of {country}. The {river} flows through {city}.",
           "What is the capital of {country}?", "Which river flows through {city}?"),
    "fi": ("{city} on valtion {country} pääkaupunki. Kaupungin {city} läpi virtaa joki {river}.",
           "Mikä on valtion {country} pääkaupunki?", "Mikä joki virtaa kaupungin {city} läpi?"),
    "id": ("{city} adalah ibu kota {country}. Sungai {river} mengalir melalui {city}.",
           "Apa ibu kota {country}?", "Sungai apa yang mengalir melalui {city}?"),
    "sw": ("{city} ni mji mkuu wa {country}. Mto {river} unapita katika mji wa {city}.",
           "Mji mkuu wa {country} ni upi?", "Mto gani unapita katika mji wa {city}?"),
    "ko": ("{country}의 수도는 {city}이다. {river} 강이 {city} 시내를 흐른다.",
           "{country}의 수도는 어디인가?", "{city} 시내를 흐르는 강은 무엇인가?"),
    "bn": ("{city} {country} দেশের রাজধানী। {river} নদী {city} শহরের মধ্য দিয়ে প্রবাহিত।",
           "{country} দেশের রাজধানী কোথায়?", "কোন নদী {city} শহরের মধ্য দিয়ে প্রবাহিত?"),
}
NAMES = {"en": "english", "fi": "finnish", "id": "indonesian", "sw": "swahili", "ko": "korean", "bn": "bengali"}
FILLER = {"en": " It is a large city with many bridges.", "fi": " Se on suuri kaupunki, jossa on monta siltaa.",
          "id": " Kota ini besar dan memiliki banyak jembatan.", "sw": " Ni mji mkubwa wenye madaraja mengi.",
          "ko": " 이 도시는 크고 다리가 많다.", "bn": " এটি অনেক সেতুর একটি বড় শহর।"}


def qa_article(lang: str, i: int, rng: random.Random) -> dict[str, Any]:
    city, country, river = FACTS[lang][i]
    text, q_capital, q_river = PASSAGE[lang]
    context = text.format(city=city, country=country, river=river)
    if i % 2:  # every other passage is longer: a window boundary falls inside it at small max_length
        context = context + FILLER[lang] * 3
    h = rng.randrange(-(2**63), 2**63)
    qas = []
    for q, (question, answer) in enumerate(((q_capital, city), (q_river, river))):
        qas.append({"answers": [{"answer_start": context.index(answer), "text": answer}],
                    "id": f"{NAMES[lang]}-{h}-{q}", "question": question.format(city=city, country=country)})
    return {"paragraphs": [{"context": context, "qas": qas}], "title": city}


def write_qa(out: Path) -> None:
    rng = random.Random(1)
    split = {"train": range(6), "dev": range(6, 8)}
    for name, idx in split.items():
        data = [qa_article(lang, i, rng) for lang in FACTS for i in idx]
        path = out / "tydiqa" / f"tydiqa-goldp-v1.1-{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"data": data, "version": "TyDiQA-GoldP-1.1-for-SQuAD-1.1"}, ensure_ascii=False)
                        + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="folder to write (default: the committed embedded/tasks)")
    out = ap.parse_args(argv).out
    write_ner(out)
    write_qa(out)


if __name__ == "__main__":
    main()
