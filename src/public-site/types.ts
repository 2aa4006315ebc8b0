import type { CommentMode } from '../limits.js';
/** What the public pages, feeds and sitemap of one site need to know about it. */
export interface PublicSite {
  id: string;
  name: string;
  description: string | null;
  /** BCP 47 tag, e.g. 'en'. */
  language: string;
  handle: string;
  /** Absolute, no trailing slash: 'https://blog.example.com' or 'http://localhost:3000/sites/my-blog'. */
  baseUrl: string;
  /** Path prefix of the site's pages on this request, no trailing slash: '' on its own domain, '/sites/<handle>' otherwise. */
  basePath: string;
  /** Posts on each index, tag and category page. */
  postsPerPage: number;
  /** Readers' comments: off, moderated or open. */
  commentsMode: CommentMode;
  /** Whether its pages offer the newsletter sign-up form (the site's newsletters are on). */
  newsletter?: boolean;
}

import type { MediaRow } from '../db/schema.js';

/** A published post as readers see it; `html` is the stored output of `renderMarkdown`. */
export interface PublicPost {
  id: string;
  slug: string;
  title: string;
  description: string | null;
  /** Rendered body. */
  html: string;
  category: string | null;
  tags: string[];
  authorId: string | null;
  /** The display name of the person who wrote it (null: none to show). */
  author: string | null;
  publishedAt: Date;
  updatedAt: Date;
  /** Minutes, >= 1. */
  readingTime: number;
  unlisted: boolean;
  /** The post's feature image (an image of the site's media library) and the post's alt text for it. */
  featureImage: { image: MediaRow; alt: string | null } | null;
  /** Readers may comment on it (when the site's comments are on). */
  commentsEnabled: boolean;
}

/** Pagination: `page` is 1-based, `pages` is at least 1 (an empty list has one, empty, page). */
export interface PageLinks {
  page: number;
  pages: number;
}
