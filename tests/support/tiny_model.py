"""A small sentence-transformers model folder made on the spot: a randomly initialised BERT (seeded), a
WordPiece tokenizer over a small vocabulary, and the module files sentence-transformers reads. Nothing is
downloaded; the folder loads with sentence-transformers and exports to ONNX like a real model."""

from __future__ import annotations

import json
import string
from pathlib import Path

#: words of the tests' texts, whole in the vocabulary (any other text falls back to letters)
WORDS = (
    "the a an of to in on for is was with and or by at from as be this that it not no "
    "database upgrade version release api token key rotate rotation policy deadline breach report "
    "days hours team service cluster backup restore migration payment gateway incident notice "
    "what when how which must should latest current new old rule"
).split()


def vocabulary() -> list[str]:
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    return special + chars + [f"##{c}" for c in string.ascii_lowercase + string.digits] + WORDS


def _tokenizer_json(vocab: list[str], path: Path) -> None:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    ids = {w: i for i, w in enumerate(vocab)}
    tok = Tokenizer(WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tok.save(str(path))


def make_model_folder(
    root: Path,
    *,
    hidden: int = 32,
    layers: int = 1,
    heads: int = 2,
    pooling: str = "mean",
    seed: int = 0,
    modules: bool = True,
    arch: str = "bert",
    dense: int | None = None,
) -> Path:
    """A sentence-transformers model folder at ``root`` (created): a transformer (``arch`` ``bert``, or
    ``mpnet``, which takes no token type ids) of width ``hidden``, pooling ``mean``, ``cls`` or ``max``,
    a Dense layer to ``dense`` dimensions when given, then Normalize; ``modules=False`` leaves out the
    sentence-transformers files (a plain transformer folder). Returns ``root``."""
    import torch
    from transformers import BertConfig, BertModel, MPNetConfig, MPNetModel

    root.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    torch.manual_seed(seed)
    shape = {
        "vocab_size": len(vocab),
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": hidden * 2,
    }
    if arch == "mpnet":
        mp = MPNetConfig(**shape, max_position_embeddings=130, pad_token_id=0)
        MPNetModel(mp).eval().save_pretrained(str(root), safe_serialization=True)
    else:
        bert = BertConfig(**shape, max_position_embeddings=128)
        BertModel(bert).eval().save_pretrained(str(root), safe_serialization=True)
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    _tokenizer_json(vocab, root / "tokenizer.json")
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]"}
    (root / "special_tokens_map.json").write_text(json.dumps({**special, "mask_token": "[MASK]"}), encoding="utf-8")
    tok_cfg = {"tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "model_max_length": 128, **special}
    (root / "tokenizer_config.json").write_text(json.dumps({**tok_cfg, "mask_token": "[MASK]"}), encoding="utf-8")
    if not modules:
        return root
    (root / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128, "do_lower_case": False}), encoding="utf-8"
    )
    (root / "1_Pooling").mkdir(exist_ok=True)
    (root / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": hidden,
                "pooling_mode_cls_token": pooling == "cls",
                "pooling_mode_mean_tokens": pooling == "mean",
                "pooling_mode_max_tokens": pooling == "max",
                "pooling_mode_mean_sqrt_len_tokens": False,
            }
        ),
        encoding="utf-8",
    )
    mods = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if dense is not None:
        from sentence_transformers.sentence_transformer.modules import Dense

        (root / "2_Dense").mkdir(exist_ok=True)
        Dense(hidden, dense).save(str(root / "2_Dense"))
        mods.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    mods.append(
        {
            "idx": len(mods),
            "name": str(len(mods)),
            "path": "3_Normalize",
            "type": "sentence_transformers.models.Normalize",
        }
    )
    (root / "3_Normalize").mkdir(exist_ok=True)
    (root / "modules.json").write_text(json.dumps(mods), encoding="utf-8")
    return root
