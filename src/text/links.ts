import { LinkifyIt } from 'linkify-it';

/**
 * Web addresses in plain text that readers typed (comments): `http(s)://...` and bare
 * `www.example.com` / `example.com` forms (made `http://`). Mail addresses, `ftp:` and
 * protocol-relative `//host` are left as text, so a link can only ever be http or https.
 */
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: false, fuzzyIP: false })
  .add('ftp:', null)
  .add('mailto:', null)
  .add('//', null);

export interface TextLink {
  /** Where the link's text starts and ends in the text. */
  index: number;
  lastIndex: number;
  /** The address to link to, always http: or https:. */
  url: string;
}

/** The links in `text`, in order. */
export function findLinks(text: string): TextLink[] {
  return (linkify.match(text) ?? [])
    .filter((match) => /^https?:\/\//i.test(match.url))
    .map((match) => ({ index: match.index, lastIndex: match.lastIndex, url: match.url }));
}
