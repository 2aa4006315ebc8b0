// 10 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/comments/webhooks.test.ts',
  'test/comments/xss.test.ts',
  'test/db/checkpoint.test.ts',
  'test/db/postgres-content-versions.test.ts',
  'test/db/steps-after-commit.test.ts',
  'test/generation/builtin.test.ts',
  'test/generation/generate.test.ts',
  'test/generation/grounding-classes.test.ts',
  'test/generation/notes.test.ts',
  'test/generation/ollama.test.ts',
]);
