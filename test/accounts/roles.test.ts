import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { addUser, asUser, signIn } from '../helpers/accounts.js';

t.test('an editor works on content but gets 403 on keys, users, webhooks and settings', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'editor@example.com', 'editor');
  const editor = await signIn(ctx, 'editor@example.com');
  const as = (method: string, url: string, payload?: object) => asUser(ctx, editor, { method: method as 'GET', url, payload });

  // Allowed: posts, knowledge, tasks, reading the site.
  t.equal((await as('POST', '/api/v1/posts', { title: 'Editor post' })).statusCode, 201);
  t.equal((await as('GET', '/api/v1/posts')).statusCode, 200);
  t.equal((await as('GET', '/api/v1/knowledge')).statusCode, 200);
  t.equal((await as('GET', '/api/v1/tasks')).statusCode, 200);
  t.equal((await as('GET', '/api/v1/site')).statusCode, 200);

  const refused: [string, string, object?][] = [
    ['GET', '/api/v1/keys'],
    ['POST', '/api/v1/keys'],
    ['DELETE', '/api/v1/keys/anything'],
    ['GET', '/api/v1/users'],
    ['POST', '/api/v1/users', { email: 'x@example.com', role: 'owner' }],
    ['PATCH', '/api/v1/users/anything', { role: 'owner' }],
    ['DELETE', '/api/v1/users/anything'],
    ['POST', '/api/v1/users/invitations/anything/resend'],
    ['DELETE', '/api/v1/users/invitations/anything'],
    ['GET', '/api/v1/webhooks'],
    ['POST', '/api/v1/webhooks', { url: 'https://example.com/hook', events: ['post.published'] }],
    ['PATCH', '/api/v1/site', { name: 'Taken over' }],
    ['POST', '/api/v1/site/domain/verify'],
  ];
  for (const [method, url, payload] of refused) {
    const res = await as(method, url, payload);
    t.equal(res.statusCode, 403, `${method} ${url}`);
    t.equal(res.json().error.code, 'FORBIDDEN');
  }
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.name, ctx.site.name, 'the settings did not change');
});

t.test('an owner manages keys and users; an API key acts as owner', async (t) => {
  const ctx = await buildTestApp(t);
  const owner = await addUser(ctx, 'owner@example.com', 'owner');
  // The first start's owner (ADMIN_EMAIL, setup pending) leaves: owner@ is the only owner.
  const admin = await ctx.app.accounts.userByEmail('admin@example.com');
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/${admin.id}` })).statusCode, 200);
  const cookie = await signIn(ctx, 'owner@example.com');
  const as = (method: string, url: string, payload?: object) => asUser(ctx, cookie, { method: method as 'GET', url, payload });

  // Keys.
  const created = await as('POST', '/api/v1/keys');
  t.equal(created.statusCode, 201, created.body);
  const { key, apiKey } = created.json().data;
  t.match(apiKey, /^blog_/);
  t.ok(apiKey.startsWith(key.prefix));
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: apiKey })).statusCode, 200, 'the new key works');
  const keys = (await as('GET', '/api/v1/keys')).json().data.keys;
  t.equal(keys.length, 2);
  t.same(Object.keys(keys[0]).sort(), ['createdAt', 'id', 'lastUsedAt', 'prefix', 'revokedAt']);
  const revoked = await as('DELETE', `/api/v1/keys/${key.id}`);
  t.equal(revoked.statusCode, 200, revoked.body);
  t.ok(revoked.json().data.key.revokedAt);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: apiKey })).statusCode, 401, 'the revoked key stops working');
  const other = await ctx.addSite('Other');
  const otherKeyId = (await ctx.app.sites.listKeys(other.site.id))[0]!.id;
  t.equal((await as('DELETE', `/api/v1/keys/${otherKeyId}`)).statusCode, 404, "another site's key is not found");
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts', key: other.key })).statusCode, 200, 'and keeps working');

  // Users: an invitation, accepted by its person, makes the membership.
  const added = await as('POST', '/api/v1/users', { email: 'New.Editor@example.com', role: 'editor' });
  t.equal(added.statusCode, 201, added.body);
  const { invitation, inviteUrl, mailed } = added.json().data;
  t.equal(invitation.email, 'new.editor@example.com');
  t.equal(invitation.status, 'pending');
  t.equal(mailed, false);
  t.match(inviteUrl, /^http:\/\/localhost:3000\/admin\/accept#token=[A-Za-z0-9_-]{43}$/);
  t.equal((await as('GET', '/api/v1/users')).json().data.users.length, 1, 'not a member before accepting');
  const accepted = await ctx.call({ method: 'POST', url: '/api/v1/auth/accept', key: null, payload: { token: new URL(inviteUrl).hash.slice('#token='.length), password: 'a long enough password' } });
  t.equal(accepted.statusCode, 200, accepted.body);
  const user = { id: accepted.json().data.session.user.id };
  t.equal((await as('POST', '/api/v1/users', { email: 'new.editor@example.com', role: 'owner' })).statusCode, 409, 'already a member');
  t.equal((await as('POST', '/api/v1/users', { email: 'not an email', role: 'owner' })).statusCode, 400);
  t.equal((await as('POST', '/api/v1/users', { email: 'a@example.com', role: 'admin' })).statusCode, 400);

  const list = (await as('GET', '/api/v1/users')).json().data;
  t.same(
    list.users.map((u: { email: string; role: string }) => [u.email, u.role]),
    [
      ['owner@example.com', 'owner'],
      ['new.editor@example.com', 'editor'],
    ],
  );
  t.same(list.invitations, [], 'the accepted invitation is gone');

  // The last owner stays one.
  const demote = await as('PATCH', `/api/v1/users/${owner.id}`, { role: 'editor' });
  t.equal(demote.statusCode, 409);
  t.equal(demote.json().error.code, 'CONFLICT');
  t.equal((await as('DELETE', `/api/v1/users/${owner.id}`)).statusCode, 409);
  const promoted = await as('PATCH', `/api/v1/users/${user.id}`, { role: 'owner' });
  t.equal(promoted.statusCode, 200, promoted.body);
  t.equal(promoted.json().data.user.role, 'owner');
  t.equal((await as('PATCH', `/api/v1/users/${owner.id}`, { role: 'editor' })).statusCode, 200, 'with another owner, the first may step down');
  // Now an editor: the owner's routes are closed to this session at once.
  t.equal((await as('GET', '/api/v1/users')).statusCode, 403);

  // An API key acts as owner: it manages users too (there is no reset link to ask for).
  t.equal((await ctx.call({ method: 'POST', url: `/api/v1/users/${owner.id}/reset` })).statusCode, 404, 'no route hands out reset links');
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/${owner.id}`, key: other.key })).statusCode, 404, "another site's user is not found");
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/users/${owner.id}` })).statusCode, 200);
  t.equal((await as('GET', '/api/v1/posts')).statusCode, 401, 'removed from the site: the session has ended');
});

t.test('two owners inviting the same email at once: one invites, the other sends it again or is told (never 500)', async (t) => {
  const ctx = await buildTestApp(t);
  for (let round = 0; round < 3; round++) {
    const add = () => ctx.call({ method: 'POST', url: '/api/v1/users', payload: { email: `race${round}@example.com`, role: 'editor' } });
    const statuses = (await Promise.all([add(), add()])).map((res) => res.statusCode);
    t.ok(statuses.every((status) => status === 201 || status === 409), `round ${round}: ${statuses}`);
    t.ok(statuses.includes(201));
  }
  t.equal(await ctx.count("select count(*) as n from invitations where email like 'race%'"), 3, 'one invitation per email');
  t.equal(await ctx.count("select count(*) as n from users where email like 'race%'"), 0, 'no account is made by inviting');
});
