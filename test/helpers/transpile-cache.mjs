// A disk cache in front of tap's TypeScript loader, for the test processes (.taprc's node-arg).
//
// The loader (ts-node, transpile-only) compiles every TypeScript module each test process
// imports, and nearly every test file imports the whole service: over a hundred modules compiled
// again in each of some 75 processes, most of a test file's start-up. Compiling one module
// without type information depends only on its text and the compiler's settings, so the output
// is kept, keyed by exactly those (and the versions of Node, TypeScript and the loader), and a
// later process loading the same text gets the same output without compiling. A module whose
// text changed has a new key: there is nothing to invalidate.
//
// Registered after the loader, these hooks run first: on a miss they hand the module on to it
// and keep what it answers. TAP_TRANSPILE_CACHE=0 turns the cache off.
import { register } from 'node:module';

if (process.env.TAP_TRANSPILE_CACHE !== '0') register('./transpile-cache-hooks.mjs', import.meta.url);
