// ESLint flat config: typescript-eslint's recommended rules over the whole tree.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', '.tap/', 'node_modules/', 'data/', 'src/client/schema.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // Sanitizing text and file names matches control characters on purpose.
      'no-control-regex': 'off',
      // Store steps are generators (src/db/steps.ts): some answer without asking the database anything.
      'require-yield': 'off',
      // Names starting with _ are deliberately unused (destructuring that drops a field).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  // The admin UI's modules run in the browser.
  { files: ['admin/**/*.js', 'views/**/*.js'], languageOptions: { globals: globals.browser, sourceType: 'module' } },
);
