"""Language codes known to the project.

Languages are written as the ISO 639-1 codes the papers use (OPUS-100, IWSLT,
WMT, FLORES tables): ``en``, ``de``, ``zh`` … A code maps to its English name and
to its FLORES-200 code (``eng_Latn``), the key of the FLORES/NTREX files. The set
covers OPUS-100's 100 languages, the IWSLT/WMT/Flores-101 languages of the four
papers, the mC4 languages of x-elm and the WikiANN / TyDiQA languages of LMS-FD Tables 7-8
(Quechua ``qu``: FLORES-200's Ayacucho Quechua ``quy_Latn``; Tagalog ``tl``).
"""

from __future__ import annotations

from typing import NamedTuple


class Language(NamedTuple):
    code: str
    name: str
    flores: str
    """FLORES-200 code (ISO 639-3 + script); empty where FLORES has no such language."""


_TABLE = """
af Afrikaans afr_Latn | am Amharic amh_Ethi | an Aragonese - | ar Arabic arb_Arab | as Assamese asm_Beng
az Azerbaijani azj_Latn | be Belarusian bel_Cyrl | bg Bulgarian bul_Cyrl | bn Bengali ben_Beng | br Breton -
bs Bosnian bos_Latn | ca Catalan cat_Latn | cs Czech ces_Latn | cy Welsh cym_Latn | da Danish dan_Latn
de German deu_Latn | dz Dzongkha dzo_Tibt | el Greek ell_Grek | en English eng_Latn | eo Esperanto epo_Latn
es Spanish spa_Latn | et Estonian est_Latn | eu Basque eus_Latn | fa Persian pes_Arab | fi Finnish fin_Latn
fr French fra_Latn | fy Western_Frisian - | ga Irish gle_Latn | gd Scottish_Gaelic gla_Latn | gl Galician glg_Latn
gu Gujarati guj_Gujr | ha Hausa hau_Latn | he Hebrew heb_Hebr | hi Hindi hin_Deva | hr Croatian hrv_Latn
hu Hungarian hun_Latn | hy Armenian hye_Armn | id Indonesian ind_Latn | ig Igbo ibo_Latn | is Icelandic isl_Latn
it Italian ita_Latn | ja Japanese jpn_Jpan | ka Georgian kat_Geor | kk Kazakh kaz_Cyrl | km Khmer khm_Khmr
kn Kannada kan_Knda | ko Korean kor_Hang | ku Kurdish kmr_Latn | ky Kyrgyz kir_Cyrl | li Limburgish lim_Latn
lt Lithuanian lit_Latn | lv Latvian lvs_Latn | mg Malagasy plt_Latn | mk Macedonian mkd_Cyrl | ml Malayalam mal_Mlym
mn Mongolian khk_Cyrl | mr Marathi mar_Deva | ms Malay zsm_Latn | mt Maltese mlt_Latn | my Burmese mya_Mymr
nb Norwegian_Bokmal nob_Latn | ne Nepali npi_Deva | nl Dutch nld_Latn | nn Norwegian_Nynorsk nno_Latn
no Norwegian nob_Latn | oc Occitan oci_Latn | or Odia ory_Orya | pa Punjabi pan_Guru | pl Polish pol_Latn
ps Pashto pbt_Arab | pt Portuguese por_Latn | qu Quechua quy_Latn | ro Romanian ron_Latn | ru Russian rus_Cyrl
rw Kinyarwanda kin_Latn
se Northern_Sami - | sh Serbo-Croatian - | si Sinhala sin_Sinh | sk Slovak slk_Latn | sl Slovenian slv_Latn
sq Albanian als_Latn | sr Serbian srp_Cyrl | sv Swedish swe_Latn | sw Swahili swh_Latn | ta Tamil tam_Taml
te Telugu tel_Telu | tg Tajik tgk_Cyrl | th Thai tha_Thai | tk Turkmen tuk_Latn | tr Turkish tur_Latn
tl Tagalog tgl_Latn | tt Tatar tat_Cyrl | ug Uyghur uig_Arab | uk Ukrainian ukr_Cyrl | ur Urdu urd_Arab
uz Uzbek uzn_Latn
vi Vietnamese vie_Latn | wa Walloon - | xh Xhosa xho_Latn | yi Yiddish ydd_Hebr | yo Yoruba yor_Latn
zh Chinese zho_Hans | zu Zulu zul_Latn
"""


def _parse(table: str) -> dict[str, Language]:
    out: dict[str, Language] = {}
    for entry in table.replace("\n", " | ").split("|"):
        if not entry.strip():
            continue
        code, name, flores = entry.split()
        out[code] = Language(code, name.replace("_", " "), "" if flores == "-" else flores)
    return out


LANGUAGES: dict[str, Language] = _parse(_TABLE)

OPUS100: tuple[str, ...] = tuple(
    "af am an ar as az be bg bn br bs ca cs cy da de dz el eo es et eu fa fi fr fy ga gd gl gu ha he hi hr hu hy id"
    " ig is it ja ka kk km kn ko ku ky li lt lv mg mk ml mn mr ms mt my nb ne nl nn no oc or pa pl ps pt ro ru rw se"
    " sh si sk sl sq sr sv ta te tg th tk tr tt ug uk ur uz vi wa xh yi yo zh zu".split()
)
"""The 99 non-English languages of OPUS-100 v1.0 (the ``en-xx`` folders of the release)."""

OPUS100_NO_EVAL: frozenset[str] = frozenset({"an", "dz", "hy", "mn", "yo"})
"""OPUS-100 languages without dev/test sets: 99 - 5 = 94 evaluation pairs (Zhang et al., 2020)."""


UNSPACED: frozenset[str] = frozenset({"zh", "ja", "th", "km", "lo", "my", "dz"})
"""Languages written without spaces between words: their length is counted in characters / 4."""


def is_known(code: str) -> bool:
    return code in LANGUAGES


def flores_code(code: str) -> str:
    """FLORES-200 code of ``code``; ``KeyError`` with a clear message if it has none."""
    lang = LANGUAGES[code]
    if not lang.flores:
        raise KeyError(f"language {code!r} ({lang.name}) has no FLORES-200 code")
    return lang.flores
