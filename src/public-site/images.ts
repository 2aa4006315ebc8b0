import type { MediaRow } from '../db/schema.js';
import { MEDIA_TYPE_OF } from '../media/detect.js';
import { mediaPath } from '../media/view.js';
import type { PublicPost, PublicSite } from './types.js';
import { sitePath, siteUrl } from './urls.js';

/** The post column's width (views/style.css `main`), for `sizes`. */
export const CONTENT_SIZES = '(min-width: 44rem) 42rem, 100vw';
/** Thumbnails on the index and list pages. */
export const THUMBNAIL_SIZES = '8rem';

/** A post's feature image as its page, lists and feeds show it. */
export interface PageImage {
  /** The original, under this request's base path. */
  src: string;
  /** WebP variants and the original, by width. */
  srcset: string;
  width: number;
  height: number;
  alt: string;
  /** What link previews and feeds take: absolute, in the original's format, at most 1,600 px wide. */
  share: { url: string; type: string; width: number; height: number; sizeBytes: number };
}

/** `srcset` of an image's files: WebP at each variant width, and the original at its own. */
export function srcsetOf(row: MediaRow, urlOf: (file: string) => string): string {
  const webp = row.variants.filter((variant) => variant.format === 'webp' && variant.width < row.width);
  return [...webp.map((variant) => `${urlOf(variant.file)} ${variant.width}w`), `${urlOf(row.file)} ${row.width}w`].join(', ');
}

export function pageImage(site: PublicSite, row: MediaRow, alt: string | null): PageImage {
  const sameFormat = [...row.variants.filter((variant) => variant.format === row.format), { file: row.file, format: row.format, width: row.width, height: row.height, sizeBytes: 0 }];
  // The widest file of the original's format no wider than 1,600 px (the original when it is).
  const share = sameFormat.filter((file) => file.width <= 1600).sort((a, b) => b.width - a.width)[0] ?? sameFormat[sameFormat.length - 1]!;
  const originalBytes = row.sizeBytes - row.variants.reduce((sum, variant) => sum + variant.sizeBytes, 0);
  return {
    src: sitePath(site, mediaPath(row.id, row.file)),
    srcset: srcsetOf(row, (file) => sitePath(site, mediaPath(row.id, file))),
    width: row.width,
    height: row.height,
    alt: alt ?? row.alt,
    share: {
      url: siteUrl(site, mediaPath(row.id, share.file)),
      type: MEDIA_TYPE_OF[share.format],
      width: share.width,
      height: share.height,
      sizeBytes: share.file === row.file ? originalBytes : share.sizeBytes,
    },
  };
}

/** The post's feature image as its pages and feeds show it. */
export function featureImageOf(site: PublicSite, post: PublicPost): PageImage | null {
  return post.featureImage && pageImage(site, post.featureImage.image, post.featureImage.alt);
}
