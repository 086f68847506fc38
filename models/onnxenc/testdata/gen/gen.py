#!/usr/bin/python3
"""Generate the tiny BERT-shaped test model for package onnxenc.

No model hub is reachable from the build machines, so the test model is made
here from random weights (fixed seed) with plain torch: a 2-layer BERT encoder
of width 32, exported to ONNX the way HuggingFace exports BertModel. The script
also writes a HuggingFace tokenizer.json (WordPiece, BertNormalizer,
BertPreTokenizer, TemplateProcessing) and testdata/reference.json, holding the
token ids a minimal but faithful BERT WordPiece tokenizer (below) produces and
the pooled embeddings torch computes, so the Go side is checked against an
independent implementation.

Run with Debian's python (python3-torch python3-onnx python3-numpy), from
anywhere:

    /usr/bin/python3 models/onnxenc/testdata/gen/gen.py

Outputs (relative to models/onnxenc/testdata/):
    tiny/model.onnx, tiny/tokenizer.json        inputs: ids, mask, token types
    tiny-notype/model.onnx, tokenizer.json      inputs: ids, mask only
    unsupported-op/model.onnx                   valid ONNX that onnx-gomlx
                                                cannot convert (Hardmax)
    reference.json
"""

import json
import math
import os
import unicodedata

import numpy as np
import onnx
import torch
from torch import nn

SEED = 20240611
HIDDEN = 32
HEADS = 2
INTERMEDIATE = 64
LAYERS = 2
MAX_POS = 128
TYPE_VOCAB = 2
LN_EPS = 1e-12
OPSET = 14

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)

# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)]
WORDS = """
the a an of to and in on is was are who what which where when how
movie movies film films director directed direct star starred actor actress
wrote write written writer by did do does for with from that this it its
quick brown fox jump over lazy dog hello world cafe naive resume
question answer graph knowledge entity relation triple path
book books author language country city born people person
un believe play played player song songs music year release released
genre type team game games about into as at be has have had
""".split()
SUFFIXES = ["##s", "##ed", "##ing", "##er", "##able", "##ly", "##ion",
            "##tion", "##ment", "##ness", "##est", "##al", "##ic", "##y"]
# Deliberately no digits: "42" and "x42" must come out as [UNK].

VOCAB = []
for tok in SPECIALS + PUNCT + LETTERS + ["##" + c for c in LETTERS] + WORDS + SUFFIXES:
    if tok not in VOCAB:
        VOCAB.append(tok)
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}
PAD_ID, UNK_ID, CLS_ID, SEP_ID = (TOKEN_ID[t] for t in SPECIALS[:4])

# ---------------------------------------------------------------------------
# Minimal BERT WordPiece tokenizer, following HuggingFace tokenizers (Rust):
# added-token split -> BertNormalizer -> BertPreTokenizer -> WordPiece ->
# TemplateProcessing "[CLS] $A [SEP]", truncating $A so the total fits max_len.
# ---------------------------------------------------------------------------


def is_whitespace(ch):
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_chinese(ch):
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or
            0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F or
            0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or
            0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def bert_normalize(text):
    out = []
    for ch in text:  # clean_text
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        out.append(" " if is_whitespace(ch) else ch)
    text = "".join(out)
    text = "".join(f" {ch} " if is_chinese(ch) else ch for ch in text)
    # strip_accents (null => follows lowercase), then lowercase, as in Rust.
    text = "".join(ch for ch in unicodedata.normalize("NFD", text)
                   if unicodedata.category(ch) != "Mn")
    return text.lower()


def bert_pre_tokenize(text):
    words, cur = [], []
    for ch in text:
        if is_whitespace(ch):
            if cur:
                words.append("".join(cur))
                cur = []
        elif is_punctuation(ch):
            if cur:
                words.append("".join(cur))
                cur = []
            words.append(ch)
        else:
            cur.append(ch)
    if cur:
        words.append("".join(cur))
    return words


def wordpiece(word, max_chars=100):
    if len(word) > max_chars:
        return [UNK_ID]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end]
            if start > 0:
                sub = "##" + sub
            if sub in TOKEN_ID:
                found = TOKEN_ID[sub]
                break
            end -= 1
        if found is None:
            return [UNK_ID]
        ids.append(found)
        start = end
    return ids


def tokenize(text, max_len):
    # Added (special) tokens are matched verbatim in the raw text first.
    ids, pos, plain = [], 0, []
    specials = sorted(SPECIALS, key=len, reverse=True)

    def flush():
        if plain:
            for w in bert_pre_tokenize(bert_normalize("".join(plain))):
                ids.extend(wordpiece(w))
            plain.clear()

    while pos < len(text):
        for sp in specials:
            if text.startswith(sp, pos):
                flush()
                ids.append(TOKEN_ID[sp])
                pos += len(sp)
                break
        else:
            plain.append(text[pos])
            pos += 1
    flush()
    ids = ids[: max_len - 2]
    return [CLS_ID] + ids + [SEP_ID]


def tokenizer_json(max_len):
    added = [{"id": TOKEN_ID[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for t in SPECIALS]
    return {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": max_len,
                       "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [CLS_ID], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [SEP_ID], "tokens": ["[SEP]"]},
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": TOKEN_ID},
    }

# ---------------------------------------------------------------------------
# The model: HuggingFace BertModel's computation in plain torch.
# ---------------------------------------------------------------------------


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(HIDDEN, HIDDEN)
        self.k = nn.Linear(HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, HIDDEN)
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.attn_ln = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.inter = nn.Linear(HIDDEN, INTERMEDIATE)
        self.out = nn.Linear(INTERMEDIATE, HIDDEN)
        self.out_ln = nn.LayerNorm(HIDDEN, eps=LN_EPS)

    def heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, HEADS, HIDDEN // HEADS).permute(0, 2, 1, 3)

    def forward(self, h, ext_mask):
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        probs = torch.softmax(scores + ext_mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.shape[0], ctx.shape[1], HIDDEN)
        h = self.attn_ln(self.attn_out(ctx) + h)
        ff = self.out(nn.functional.gelu(self.inter(h)))  # exact (erf) GELU
        return self.out_ln(ff + h)


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(len(VOCAB), HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.typ = nn.Embedding(TYPE_VOCAB, HIDDEN)
        self.emb_ln = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.pooler = nn.Linear(HIDDEN, HIDDEN)
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        seq = input_ids.shape[1]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        pos = self.position_ids[:, :seq]
        h = self.emb_ln(self.word(input_ids) + self.typ(token_type_ids) + self.pos(pos))
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            h = layer(h, ext)
        return h, torch.tanh(self.pooler(h[:, 0]))


class NoTypeBert(nn.Module):
    """Same weights, but the graph takes only input_ids and attention_mask."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask):
        return self.inner(input_ids, attention_mask)


def init_weights(model):
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif "ln" in name:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.2 * torch.randn(p.shape, generator=g))


def export(model, path, names):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    b, s = 2, 7
    args = (torch.ones(b, s, dtype=torch.int64), torch.ones(b, s, dtype=torch.int64),
            torch.zeros(b, s, dtype=torch.int64))[: len(names)]
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    axes["pooler_output"] = {0: "batch"}
    torch.onnx.export(model, args, path, input_names=names,
                      output_names=["last_hidden_state", "pooler_output"],
                      dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def export_unsupported(path):
    """A well-formed model with the right signature but an op onnx-gomlx
    lacks, so that loading fails inside GoMLX (by panic) and not in the
    protobuf parser: the Go side must turn that into an error."""
    from onnx import TensorProto, helper
    os.makedirs(os.path.dirname(path), exist_ok=True)
    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        [helper.make_node("Cast", ["input_ids"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("axes", TensorProto.INT64, [1], [2])),
         helper.make_node("Unsqueeze", ["f", "axes"], ["u"]),
         helper.make_node("Hardmax", ["u"], ["last_hidden_state"], axis=-1)],
        "unsupported",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="onnxenc-gen")
    onnx.checker.check_model(model)
    onnx.save(model, path)


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def embed(model, batch):
    """Pads batch (lists of ids) to its longest and returns mean and CLS vectors."""
    s = max(len(ids) for ids in batch)
    ids = torch.tensor([x + [PAD_ID] * (s - len(x)) for x in batch], dtype=torch.int64)
    mask = torch.tensor([[1] * len(x) + [0] * (s - len(x)) for x in batch], dtype=torch.int64)
    with torch.no_grad():
        h, _ = model(ids, mask, torch.zeros_like(ids))
    h = h.double().numpy()
    m = mask.double().numpy()[:, :, None]
    mean = (h * m).sum(axis=1) / m.sum(axis=1)
    return unit(mean), unit(h[:, 0])


SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world!",
    "",
    "Who directed the films that Brad Pitt starred in?",
    "Unbelievably:  42 x42y\tqwrtp!!\n(naïve CAFÉ résumé)",
    "what language is spoken in the country where the author of the book was born",
    "question [SEP] answer",
]
TRUNC_LEN = 12


def main():
    torch.manual_seed(SEED)
    model = TinyBert().eval()
    init_weights(model)

    tok = tokenizer_json(MAX_POS)
    for sub, names, m in (("tiny", ["input_ids", "attention_mask", "token_type_ids"], model),
                          ("tiny-notype", ["input_ids", "attention_mask"], NoTypeBert(model))):
        export(m, os.path.join(TESTDATA, sub, "model.onnx"), names)
        with open(os.path.join(TESTDATA, sub, "tokenizer.json"), "w") as f:
            json.dump(tok, f, indent=1, ensure_ascii=False)
            f.write("\n")

    export_unsupported(os.path.join(TESTDATA, "unsupported-op", "model.onnx"))

    ids = [tokenize(s, MAX_POS) for s in SENTENCES]
    mean, cls = embed(model, ids)
    # Padding must not change any vector: check against one-by-one in torch.
    for i, x in enumerate(ids):
        m1, c1 = embed(model, [x])
        assert np.abs(m1[0] - mean[i]).max() < 1e-5 and np.abs(c1[0] - cls[i]).max() < 1e-5

    trunc_ids = [tokenize(s, TRUNC_LEN) for s in SENTENCES]
    assert all(len(x) <= TRUNC_LEN for x in trunc_ids)
    tmean, tcls = embed(model, trunc_ids)

    def rows(a):
        return [[round(float(v), 7) for v in r] for r in a]

    ref = {
        "comment": "generated by testdata/gen/gen.py; do not edit",
        "dim": HIDDEN,
        "max_len": MAX_POS,
        "sentences": SENTENCES,
        "token_ids": ids,
        "mean": rows(mean),
        "cls": rows(cls),
        "truncated": {"max_len": TRUNC_LEN, "token_ids": trunc_ids,
                      "mean": rows(tmean), "cls": rows(tcls)},
    }
    with open(os.path.join(TESTDATA, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1, ensure_ascii=False)
        f.write("\n")
    for i, s in enumerate(SENTENCES):
        print(f"{s!r}: {ids[i]}")


if __name__ == "__main__":
    main()
