import { simpleParser } from 'mailparser';
import t from 'tap';
import type { Site } from '../../src/db/schema.js';
import { newsletterTemplate, personalMessage } from '../../src/newsletters/message.js';
import MimeNode from 'nodemailer/lib/mime-node';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { composeNewsletter, newsletterMail, recipientOf } from '../../src/newsletters/mime.js';
import type { PublicPost, PublicSite } from '../../src/public-site/types.js';

// A newsletter is composed once per send and each recipient's message spliced from it: every
// message must read, once decoded, exactly as the message Nodemailer would have composed for
// that recipient alone (personalMessage), with that recipient's own link and address.

const site = { name: 'Café Notes', language: 'fr', newsletterFooter: 'Écrit à la main — with a line that ends in spaces   \nand a second one', newsletterReplyTo: 'desk@example.com', newsletterSenderName: null } as unknown as Site;
const view = { baseUrl: 'https://blog.example.com/sites/caf%C3%A9' } as unknown as PublicSite;
const long = 'x'.repeat(300);
const html = [
  '<p>Déjà vu: a paragraph long enough to be wrapped by quoted-printable encoding, with = signs, tabs\tand “quotes”.</p>',
  `<p>${long}</p>`,
  '<p>.a line that starts with a dot</p>',
  '<pre>  indented\n.dot\n\ntrailing space \n</pre>',
  '<p>日本語のテキストも少し。</p>',
].join('\n');
const post = { title: 'Été: the “summer” issue', slug: 'ete', html, featureImage: null } as unknown as PublicPost;
const from = { name: 'Café Notes', address: 'news@example.com' };

t.test('each spliced message decodes to the message composed for its recipient alone', async (t) => {
  const template = newsletterTemplate(site, view, post);
  const composed = await composeNewsletter(template, from);
  const recipients = [
    { to: 'reader@example.com', token: 'tok_A-1' },
    { to: 'lecteur@exämple.fr', token: 'a&b=c/d' },
    { to: 'other@example.com', token: 'x'.repeat(90) },
  ];
  const ids = new Set<string>();
  for (const { to, token } of recipients) {
    const expected = personalMessage(template, view, to, token);
    const mail = newsletterMail(composed, view, to, token);
    const [head = '', ...body] = mail.raw.split('\r\n\r\n');
    t.ok(head.split('\r\n').every((line) => line.length <= 998), 'no header line over 998 characters');
    t.ok(body.join('\r\n\r\n').split('\r\n').every((line) => line.length <= 76), 'no body line over quoted-printable\'s 76');
    t.notMatch(mail.raw, /[^\r]\n/, 'CRLF line ends only');
    const parsed = await simpleParser(mail.raw);
    t.equal(parsed.subject, expected.subject);
    t.equal(parsed.from?.value[0]?.address, 'news@example.com');
    t.equal(parsed.from?.value[0]?.name, 'Café Notes');
    t.equal((Array.isArray(parsed.to) ? parsed.to[0] : parsed.to)?.value[0]?.address, to);
    t.equal((Array.isArray(parsed.replyTo) ? parsed.replyTo[0] : parsed.replyTo)?.value[0]?.address, 'desk@example.com');
    t.equal(String(parsed.html).replace(/\r\n/g, '\n'), expected.html.replace(/\r\n/g, '\n'), `html of ${to}`);
    t.equal(String(parsed.text).replace(/\r\n/g, '\n'), expected.text.replace(/\r\n/g, '\n'), `text of ${to}`);
    const unsubscribe = /^List-Unsubscribe: ?(?:\r\n )?(.+)$/m.exec(mail.raw)?.[1];
    t.equal(unsubscribe, expected.headers!['List-Unsubscribe'], 'their own List-Unsubscribe');
    t.match(mail.raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    t.match(expected.text, encodeURIComponent(token), 'the expected text carries the token');
    t.same(mail.envelope, { from: 'news@example.com', to: [to.endsWith('.fr') ? 'lecteur@xn--exmple-cua.fr' : to] });
    ids.add(String(parsed.messageId));
  }
  t.equal(ids.size, recipients.length, 'a Message-ID of its own for each');
});

t.test("a recipient's To header and envelope address are Nodemailer's own, with or without parsing", async (t) => {
  const addresses = ['reader@example.com', 'first.last+tag@mail.example.co.uk', "o'brien@example.org", 'x_y@sub-domain.example.com', '.dot@example.com', 'lecteur@exämple.fr', 'ünïcode@example.com', 'a@xn--exmple-cua.fr', 'a@0x7f.example.com'];
  for (const address of addresses) {
    const node = new MimeNode();
    node.setHeader('To', address);
    const expected = { header: foldLines(`To: ${node.encodeHeaderValue('To', address)}`, 76), envelope: node.getEnvelope().to };
    t.same(recipientOf(address), expected, address);
  }
});
