// A small server speaking Ollama's wire protocol for embeddings (GET /api/tags, POST /api/embed),
// for the hybrid retrieval tests and bench:knowledge. Its vectors are deterministic: a hashed bag
// of the text's concepts, where a few words stand for the same concept (`irrigation` and
// `watering` are both "water"), so texts that mean alike are close though their words differ.
// Another model name gives other vectors (its name seeds the hash).
import http from 'node:http';

/** Words that stand for one concept: what makes a paraphrase close to its original. */
const CONCEPTS = {
  water: ['water', 'watering', 'watered', 'irrigation', 'irrigate', 'irrigating', 'hydrate', 'hydration', 'moisture', 'moisten'],
  pot: ['pot', 'pots', 'potted', 'container', 'containers', 'planter', 'planters', 'vessel', 'tub', 'tubs'],
  vegetable: ['tomato', 'tomatoes', 'vegetable', 'vegetables', 'veg', 'crop', 'crops', 'produce'],
  balcony: ['balcony', 'balconies', 'terrace', 'patio', 'rooftop'],
  soil: ['soil', 'compost', 'peat', 'mix', 'substrate', 'earth'],
  coffee: ['coffee', 'espresso', 'brew', 'brewing', 'caffeine', 'barista'],
  morning: ['morning', 'dawn', 'sunrise', 'early'],
};
const CONCEPT_OF = new Map(Object.entries(CONCEPTS).flatMap(([concept, words]) => words.map((word) => [word, concept])));
const STOPWORDS = new Set('a an and are as at be by for from how in is it of on or that the this to with your you do does what when'.split(' '));

/** FNV-1a over a string: a stable 32-bit hash. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The fake vector of `text` under `model`: `dimensions` floats, not normalized (the service scales them). */
export function fakeVector(text, model, dimensions) {
  const vector = new Array(dimensions).fill(0);
  for (const word of String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word)) continue;
    const concept = CONCEPT_OF.get(word) ?? word;
    const h = hash(`${model}\u0000${concept}`);
    vector[h % dimensions] += h & 0x80000000 ? -1 : 1;
  }
  // An empty text still has a direction.
  if (vector.every((v) => v === 0)) vector[hash(model) % dimensions] = 1;
  return vector;
}

/**
 * Starts the server. Options: `models` (names /api/tags lists and /api/embed accepts),
 * `dimensions` (default 64), `port` (0: any). Answers an object to steer it:
 * - `calls`: every /api/embed request ({ model, input: string[] }), in order;
 * - `models`: change it while running (a model removed answers 404, as Ollama does);
 * - `hold(skip)`: embed requests after the next `skip` wait until the function it returns is called (a crash mid-way);
 * - `failNext(n, status, skip)`: after the next `skip` embed requests, n answer `status` (500 by default);
 * - `stop()` / `start()`: stop listening (an outage: connections refused) and listen again on the same port;
 * - `close()`.
 */
export async function startFakeEmbeddings({ models = ['nomic-embed-text:latest'], dimensions = 64, port = 0, delayMs = 0 } = {}) {
  const state = { calls: [], models: [...models], held: null, heldFrom: 0, failures: 0, failFrom: 0, failStatus: 500 };
  const sockets = new Set();
  const send = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const known = (name) => state.models.some((m) => m === name || m === `${name}:latest`);
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    let json;
    try {
      json = body ? JSON.parse(body) : {};
    } catch {
      return send(res, 400, { error: 'invalid JSON' });
    }
    if (req.url === '/api/tags') {
      return send(res, 200, { models: state.models.map((name) => ({ name, model: name, modified_at: '2025-01-01T00:00:00Z', size: 274302450, digest: hash(name).toString(16), details: { family: 'nomic-bert', format: 'gguf' } })) });
    }
    if (req.url === '/api/embed' && req.method === 'POST') {
      const model = String(json.model ?? '');
      if (!known(model)) return send(res, 404, { error: `model "${model}" not found, try pulling it first` });
      const input = Array.isArray(json.input) ? json.input.map(String) : [String(json.input ?? '')];
      const index = state.calls.push({ model, input }) - 1;
      if (state.held && index >= state.heldFrom) await state.held;
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (state.failures > 0 && index >= state.failFrom) {
        state.failures--;
        return send(res, state.failStatus, { error: 'the fake server failed on purpose' });
      }
      return send(res, 200, { model, embeddings: input.map((text) => fakeVector(text, model, dimensions)), total_duration: 1, load_duration: 0, prompt_eval_count: input.length });
    }
    send(res, 404, { error: 'not found' });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (at) => new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
  const stopListening = () => new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
  const actualPort = await listen(port);
  return {
    url: `http://127.0.0.1:${actualPort}`,
    get calls() { return state.calls; },
    get models() { return state.models; },
    set models(value) { state.models = [...value]; },
    hold(skip = 0) {
      let release;
      state.heldFrom = state.calls.length + skip;
      state.held = new Promise((resolve) => (release = resolve));
      return () => {
        state.held = null;
        release();
      };
    },
    failNext(n, status = 500, skip = 0) {
      state.failures = n;
      state.failFrom = state.calls.length + skip;
      state.failStatus = status;
    },
    stop: stopListening,
    start: () => listen(actualPort).then(() => undefined),
    close: () => (server.listening ? stopListening() : Promise.resolve()),
  };
}
