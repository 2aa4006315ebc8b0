// The spam guard's proof of work on the public forms: the ALTCHA widget, served by this
// service with its SHA worker (no CDN, no inline script, no cookie). Loaded as a module.
import './altcha.js';

const worker = new URL('./sha-worker.js', import.meta.url);
for (const algorithm of ['SHA-256', 'SHA-384', 'SHA-512']) {
  globalThis.$altcha.algorithms.set(algorithm, () => new Worker(worker));
}
