import t from 'tap';
import path from 'node:path';
import { buildTestApp, fixturesDir } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp, shoot, signIn } from '../helpers/browser.js';

/**
 * A person's day in the admin UI, in headless Chromium: signed in by a session (never an API
 * key), writing, previewing, publishing and unpublishing a post, feeding the knowledge base,
 * generating a post, scheduling a batch, creating an API key, and signing out.
 */
t.test('the admin UI in Chromium', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const email = 'owner@example.com';
  const token = await invite(t, ctx, email);
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;

  // Not signed in: the UI sends the person to sign in.
  await page.goto(`${origin}/admin/`);
  await page.waitForURL(`${origin}/admin/sign-in`);
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  await shoot(t, b, 'sign-in');

  // Keyboard: the first Tab lands on the skip link, shown with a visible focus ring.
  await page.keyboard.press('Tab');
  const skip = await page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    const style = getComputedStyle(el);
    return { text: el.textContent, outline: style.outlineStyle, width: style.outlineWidth, left: el.getBoundingClientRect().left };
  });
  t.equal(skip.text, 'Skip to content', 'the skip link comes first');
  t.ok(skip.outline !== 'none' && skip.width !== '0px' && skip.left >= 0, `focus is visible (${JSON.stringify(skip)})`);

  // The setup link: choose a password, then signed in.
  await setUp(b, token);
  t.equal(new URL(page.url()).hash, '', 'the setup token is gone from the address');
  t.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible(), 'the header offers Sign out');
  for (const name of ['Posts', 'Knowledge', 'Generate', 'Batches', 'Webhooks', 'API keys', 'Users', 'Settings']) {
    t.ok(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).isVisible(), `an owner sees “${name}”`);
  }

  // Sign out and back in: a wrong password is refused with the API's message, the right one works.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await signIn(b, email, 'not the password at all');
  t.match(await page.getByRole('alert').textContent(), /Email or password is wrong/, 'a wrong password says so');
  await signIn(b, email);
  await page.waitForURL(`${origin}/admin/posts`);
  await page.getByRole('heading', { level: 1, name: 'Posts' }).waitFor();

  // Write a post: its Markdown heading shows in the preview as the public page will show it.
  await page.getByRole('link', { name: 'New post' }).click();
  await page.waitForURL(`${origin}/admin/posts/new`);
  const title = 'Herons at dawn';
  await page.getByLabel('Title').fill(title);
  await page.getByLabel('Content').fill('# Spotting herons\n\nThey stand still in the **shallows**.\n');
  await page.getByLabel('Description').fill('A grey shape in the reeds.');
  await page.getByLabel('Tags').fill('birds, river');
  await page.getByLabel('Category').fill('Nature');
  // The preview is the public page, framed, once the draft has saved itself.
  const preview = page.getByRole('region', { name: 'Preview' }).frameLocator('iframe');
  await preview.getByRole('heading', { name: 'Spotting herons' }).waitFor();
  t.equal(await preview.locator('h2#spotting-herons').count(), 1, 'the heading renders as the public h2, with its id');
  t.equal(await preview.locator('strong', { hasText: 'shallows' }).count(), 1);
  t.equal(await preview.locator('h1').textContent(), title, 'with the title as the page shows it');
  await shoot(t, b, 'editor-new');

  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  await page.waitForURL(/\/admin\/posts\/[0-9a-f-]{36}$/);
  const postId = page.url().split('/').pop()!;
  const stored = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).json().data.post;
  t.match(stored, { title, isDraft: true, tags: ['birds', 'river'], category: 'Nature', description: 'A grey shape in the reeds.' }, 'the draft holds the fields');
  t.ok(await page.getByLabel('Slug').isVisible(), 'a saved post shows its slug');

  // Publish, then open the public page from the link.
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published.', { exact: true }).waitFor();
  const publicLink = page.getByRole('link', { name: 'View public page' });
  const href = (await publicLink.getAttribute('href'))!;
  t.match(href, /^\/sites\/[\w-]+\/herons-at-dawn\/$/, `the public link: ${href}`);
  await publicLink.click();
  await page.waitForURL(`${origin}${href}`);
  t.equal(await page.locator('h1').textContent(), title, 'the public page shows the post');
  t.ok(await page.locator('.post-body h2', { hasText: 'Spotting herons' }).isVisible(), 'with its heading');
  await page.goBack();
  await page.getByRole('button', { name: 'Unpublish' }).waitFor();
  await shoot(t, b, 'editor');

  // Unpublish: the public page is gone.
  await page.getByRole('button', { name: 'Unpublish' }).click();
  await page.getByText('Unpublished: the public page is gone.').waitFor();
  const gone = await page.request.get(`${origin}${href}`);
  t.equal(gone.status(), 404, 'the unpublished post’s page is 404');

  // The post list, with its filter and search.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Posts' }).click();
  await page.getByRole('link', { name: title }).waitFor();
  await page.getByLabel('Search').fill('herons');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(`${origin}/admin/posts?q=herons`);
  await page.getByRole('link', { name: title }).waitFor();
  await page.getByLabel('Status').selectOption('published');
  await page.waitForURL(`${origin}/admin/posts?status=published&q=herons`);
  await page.getByText('No post matches.').waitFor();
  await page.goto(`${origin}/admin/posts`);
  await page.getByRole('link', { name: title }).waitFor();
  await shoot(t, b, 'posts');

  // Delete asks first; cancelling keeps the post, confirming removes it.
  await page.getByRole('link', { name: title }).click();
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).statusCode, 200, 'cancel keeps the post');
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.waitForURL(`${origin}/admin/posts`);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${postId}` })).statusCode, 404, 'confirming deletes it');

  // Knowledge: upload a file, watch it become indexed without reloading, then search it.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Knowledge' }).click();
  await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor();
  await page.getByLabel('Upload a file').setInputFiles(path.join(fixturesDir, 'text/coffee-brewing-guide.md'));
  await page.locator('li[data-status="indexed"]', { hasText: 'coffee-brewing-guide.md' }).waitFor();
  t.ok(await page.locator('li', { hasText: 'coffee-brewing-guide.md' }).getByText('Indexed').isVisible(), 'the file shows as indexed');
  // Dropped on the upload area, a file uploads the same way.
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.items.add(new File(['Herons nest in colonies called heronries, high in the trees by the river.'], 'heron-notes.txt', { type: 'text/plain' }));
    document.querySelector('.drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await page.locator('li[data-status="indexed"]', { hasText: 'heron-notes.txt' }).waitFor();
  t.pass('a dropped file is uploaded and indexed');
  // A file that cannot be read ends failed, with its error shown.
  await page.getByLabel('Upload a file').setInputFiles({ name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\nthis is not really a PDF at all\n%%EOF\n') });
  const broken = page.locator('li[data-status="failed"]', { hasText: 'broken.pdf' });
  await broken.waitFor();
  t.ok(((await broken.locator('.message.error').textContent()) ?? '').length > 0, `a failed file shows its error: ${await broken.locator('.message.error').textContent()}`);
  await page.getByLabel('Search the knowledge').fill('grind size');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('ol.rows li', { hasText: 'coffee-brewing-guide.md' }).first().waitFor();
  await shoot(t, b, 'knowledge');

  // Generate: a visible busy state while it works, then the draft opens in the editor.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Generate' }).click();
  await page.getByLabel('Topic').fill('Brewing coffee at home');
  await page.getByLabel('Length').selectOption('short');
  await page.getByLabel('Tone').selectOption('conversational');
  await page.evaluate(() => {
    const form = document.querySelector('main form')!;
    new MutationObserver(() => {
      if (form.getAttribute('aria-busy') === 'true') (window as unknown as { sawBusy: boolean }).sawBusy = true;
    }).observe(form, { attributes: true, attributeFilter: ['aria-busy'] });
  });
  await page.getByRole('button', { name: 'Generate' }).click();
  await page.waitForURL(/\/admin\/posts\/[0-9a-f-]{36}$/, { timeout: 120_000 });
  t.ok(await page.evaluate(() => (window as unknown as { sawBusy?: boolean }).sawBusy), 'the form was marked busy while generating');
  await page.getByLabel('Title').waitFor();
  t.ok((await page.getByLabel('Title').inputValue()).length > 0, 'the generated draft’s title is in the editor');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), await page.getByLabel('Title').inputValue(), 'the heading is the title');
  t.match(await page.locator('main').textContent(), /Generated by the built-in writer|Written by the built-in writer/, 'the editor says which writer wrote it');
  t.ok((await page.getByLabel('Content').inputValue()).length > 100, 'and its content');
  t.ok(await page.getByRole('button', { name: 'Publish' }).isVisible(), 'it is a draft');
  await page.getByRole('region', { name: 'Preview' }).locator('h2').first().waitFor();

  // Batches: three topics; the progress bar reaches 3 without reloading.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' }).click();
  await page.getByLabel('Topics').fill('Espresso basics\nCold brew\nPour-over technique');
  await page.getByRole('button', { name: 'Schedule' }).click();
  const bar = page.getByRole('progressbar');
  await bar.waitFor();
  // The bar shows as soon as the batch is known; its task count fills in from the live updates.
  await page.waitForFunction(() => document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuemax') === '3', undefined, { timeout: 30_000 }).catch(() => {});
  t.equal(await bar.getAttribute('aria-valuemax'), '3', 'the bar counts three tasks');
  await page.waitForFunction(() => document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') === '3', undefined, { timeout: 180_000 });
  t.equal(await bar.getAttribute('aria-valuenow'), '3', 'the bar reaches 3');
  t.equal(await page.locator('section[aria-labelledby="progress-heading"]').getByRole('link', { name: 'Open post' }).count(), 3, 'each task links its post');
  await shoot(t, b, 'batches');

  // API keys: the key is shown once, works, and afterwards only its prefix shows.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.locator('code.secret').textContent())!.trim();
  t.ok(secret.length > 20, 'the new key is shown');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/site', key: secret })).statusCode, 200, 'and it works');
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  await page.locator('code.prefix').first().waitFor();
  t.equal(await page.locator('code.secret').count(), 0, 'after a reload the key is not shown again');
  t.notOk((await page.locator('main').textContent())!.includes(secret), 'nor anywhere on the page');
  await shoot(t, b, 'keys');

  // Sign out: back to sign in, and the other screens send there too.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${origin}/admin/sign-in`);
  await page.goto(`${origin}/admin/posts`);
  await page.waitForURL(/\/admin\/sign-in\?next=/);
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();

  // The one failed request is the wrong password (401); the signed-out pages never ask for a session they cannot have.
  const unexpected = b.problems.filter((p) => !/401 \(Unauthorized\)/.test(p) || !/\/api\/v1\/auth\/sign-in$/.test(p));
  t.same(unexpected, [], 'no console errors, page errors or failed requests');
  t.same(b.dialogs, [], 'no JavaScript dialogs');
  t.same(b.requests.filter((url) => !url.startsWith(`${origin}/`)), [], 'every request goes to the service itself');
});
