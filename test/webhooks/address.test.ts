import t from 'tap';
import { forbiddenReason } from '../../src/webhooks/address.js';
import { buildTestApp } from '../helpers/app.js';

// Each: an address of a range the IANA registries mark not globally reachable, or a form
// carrying such an IPv4 address.
const FORBIDDEN = [
  '::ffff:0:7f00:1', // SIIT form of 127.0.0.1
  '::ffff:0:808:808', // SIIT: refused whatever it carries
  '::7f00:1', // IPv4-compatible 127.0.0.1
  '::ffff:8.8.8.8', // IPv4-mapped: not globally reachable (registry)
  '64:ff9b:1::a00:1', // local-use NAT64 (RFC 8215)
  '64:ff9b:1:ffff::808:808',
  '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
  '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2002:a9fe:a9fe::1', // 6to4 of the metadata address
  '2001::1', // Teredo
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '3fff::1', // documentation (RFC 9637)
  '3fff:fff:ffff::1',
  '5f00::1', // SRv6 SIDs (RFC 9602)
  '2001:2::1', // benchmarking
  '2001:2:0:ffff::1',
  '2001:10::1', // deprecated ORCHID
  '100::1', // discard
  '100:0:0:1::1', // dummy prefix
  '4000::1', // not allocated as global unicast
  '1::1',
  'fec0::1',
  '192.0.0.8',
  '192.0.0.170',
  '255.255.255.255',
  '192.88.99.1',
  '0.1.2.3',
];
const ALLOWED = ['8.8.8.8', '192.0.0.9', '2001:1::1', '2001:3::1', '2001:20::1', '2606:4700:4700::1111', '64:ff9b::808:808', '2002:808:808::1', '2620:4f:8000::1', '3fff:1000::1'];

t.test('every special-purpose range that is not globally reachable, and every form embedding IPv4, is refused', async (t) => {
  for (const address of FORBIDDEN) t.ok(forbiddenReason(address), `${address}: ${forbiddenReason(address)}`);
  for (const address of ALLOWED) t.equal(forbiddenReason(address), null, `${address} is reachable`);
});

t.test('through the API: refused addresses and port 0 are 400 naming the url', async (t) => {
  const ctx = await buildTestApp(t);
  const urls = [
    'http://[::ffff:0:7f00:1]/hook',
    'http://[64:ff9b:1::a00:1]/hook',
    'http://[3fff::1]/hook',
    'http://[5f00::1]/hook',
    'http://[2001:2::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[2002:7f00:1::1]/hook',
    'http://93.184.215.14:0/hook',
    'https://example.com:0/hook',
  ];
  for (const url of urls) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url, events: ['post.published'] } });
    t.equal(res.statusCode, 400, `${url}: 400 (${res.body})`);
    t.equal(res.json().error.details?.[0]?.path, '/body/url');
  }
  // Port 0 is refused even where private addresses are allowed.
  const open = await buildTestApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const res = await open.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'http://127.0.0.1:0/', events: ['post.published'] } });
  t.equal(res.statusCode, 400);
});
