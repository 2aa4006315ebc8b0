/** Composition of a post from the topic, the style and tone voices and the digested sources. */

import { MAX_TITLE_LENGTH, type Length } from '../../limits.js';
import { WORD_TARGETS, type GeneratedPost, type GenerationRequest } from '../types.js';
import { ASPECTS, FALLBACK_FOCUS, GENERIC_EXAMPLES } from './aspects.js';
import { deriveCategory, deriveTags, digestSources, type SourceDigest } from './digest.js';
import { capitalize, contract, countWords, fill, hashString, midSentence, pick, rankByFrequency, titleCase, tokens, unique } from './text.js';
import { STYLE_VOICES, TONE_VOICES, type StyleVoice, type ToneVoice } from './voices.js';

/** How much of the knowledge base each length has room for. */
const SOURCE_SECTIONS: Record<Length, number> = { short: 2, medium: 4, long: 8 };
const KEY_SENTENCES: Record<Length, number> = { short: 1, medium: 2, long: 3 };

/** The examples section: source sentences that look like examples first, then generic ones. */
const EXAMPLE_COUNT = 3;
const MAX_SOURCE_EXAMPLES = 2;
const EXAMPLE_MARKERS = /\d|\b(?:for example|for instance|e\.g\.|such as)\b/i;

export class Composer {
  private readonly style: StyleVoice;
  private readonly tone: ToneVoice;
  private readonly seed: number;
  private readonly vars: Record<string, string>;
  private readonly sources: SourceDigest[];
  private readonly focus: string[];
  private readonly tags: string[];
  private readonly category: string;
  /** Keywords already used in a heading, so two sections never share a title. */
  private readonly headingWords = new Set<string>();
  private closerIndex = 0;
  private connectorIndex = 0;

  constructor(private readonly req: GenerationRequest) {
    this.style = STYLE_VOICES[req.style];
    this.tone = TONE_VOICES[req.tone];
    const topic = req.topic.replace(/\s+/g, ' ').trim().replace(/[.!?:;,]+$/, '') || 'the subject';
    this.seed = hashString(topic.toLowerCase());

    const topicWords = unique(tokens(topic, 2));
    const allSources = digestSources(req.passages, new Set(topicWords), KEY_SENTENCES[req.length]);
    this.sources = allSources.slice(0, SOURCE_SECTIONS[req.length]);
    const sourceWords = allSources.flatMap((s) => s.words);
    const sourceKeywords = rankByFrequency(sourceWords).filter((w) => !topicWords.includes(w));

    this.category = deriveCategory(topicWords, sourceWords);
    this.tags = deriveTags(topicWords, sourceKeywords, this.category);
    this.focus = unique([...sourceKeywords.slice(0, 3), ...FALLBACK_FOCUS]);
    const topicInSentence = midSentence(topic, allSources.map((s) => s.text).join(' '));
    this.vars = {
      topic: topicInSentence,
      Topic: capitalize(topic),
      audience: req.targetAudience?.trim() || `anyone interested in ${topicInSentence}`,
      k1: this.focus[0],
      k2: this.focus[1],
      k3: this.focus[2],
    };
  }

  compose(): GeneratedPost {
    const target = WORD_TARGETS[this.req.length];
    const intro = this.intro();
    const sourceSections = this.sources.map((source, i) => this.sourceSection(source, i));
    const examples = this.req.includeExamples ? this.examples() : [];
    const conclusion = this.conclusion();

    const used = countWords([intro, ...sourceSections, ...examples, ...conclusion].join('\n'));
    const [lead, ...rest] = this.aspectSections(target - used);

    // "Why it matters" reads best before the source material, the other topic sections after it.
    const blocks = [intro, ...(lead ? [lead] : []), ...sourceSections, ...rest, ...examples, ...conclusion];
    return {
      title: titleCase(fill(pick(this.style.titles, this.seed), this.vars)).slice(0, MAX_TITLE_LENGTH),
      description: this.description(),
      category: this.category,
      tags: this.tags,
      content: `${blocks.join('\n\n')}\n`,
    };
  }

  /** The composer's own prose, in the style's register (quotes from sources never pass here). */
  private say(template: string, extra: Record<string, string> = {}): string {
    const text = fill(template, { ...this.vars, ...extra });
    return this.style.contractions ? contract(text) : text;
  }

  private nextCloser(): string {
    return this.say(pick(this.tone.closers, this.seed + this.closerIndex++));
  }

  /** Opens a paragraph with the style's connector ("Furthermore, the ..."). */
  private withConnector(paragraph: string): string {
    const connector = pick(this.style.connectors, this.seed + this.connectorIndex++);
    if (paragraph.startsWith('{Topic}')) return `${connector} ${paragraph.replace('{Topic}', '{topic}')}`;
    return `${connector} ${paragraph.charAt(0).toLowerCase()}${paragraph.slice(1)}`;
  }

  private cite(source: SourceDigest): string {
    return this.style.numberedCitations ? `[${source.ref}]` : `(source: *${source.fileName}*)`;
  }

  private description(): string {
    const first = this.say(this.style.description);
    const [source, ...others] = this.sources;
    if (!source) return first;
    const more = others.length === 0 ? '' : ` and ${others.length} more source${others.length === 1 ? '' : 's'}`;
    return `${first} Grounded in ${source.fileName}${more}.`;
  }

  private intro(): string {
    const sentences = [this.say(this.tone.opener), this.say(this.style.intro)];
    if (this.sources.length > 0) {
      const files = this.sources.map((s) => `*${s.fileName}*`);
      const list = files.length === 1 ? files[0] : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
      const count = this.sources.length === 1 ? 'one source' : `${this.sources.length} sources`;
      sentences.push(this.say(`It draws on ${count} from the knowledge base (${list}) and quotes them where they matter most.`));
      if (this.style.numberedCitations) sentences.push('Sources are cited by number and listed at the end.');
    } else {
      sentences.push(this.say('It focuses on widely applicable principles rather than narrow specifics.'));
    }
    return sentences.join(' ');
  }

  private sectionHeading(source: SourceDigest, index: number): string {
    const [a, b] = source.keywords.filter((w) => !this.headingWords.has(w));
    for (const word of [a, b]) if (word) this.headingWords.add(word);
    if (a && b) return fill(pick(this.style.pairHeadings, index), { A: titleCase(a), B: titleCase(b) });
    if (a) return fill(pick(this.style.singleHeadings, index), { A: titleCase(a) });
    return titleCase(source.fileName.replace(/\.[^.]+$/, '').replace(/[-_]+/g, ' '));
  }

  private sourceSection(source: SourceDigest, index: number): string {
    const file = `*${source.fileName}*`;
    const citation = this.style.numberedCitations ? ` [${source.ref}]` : '';
    const parts = [
      `## ${this.sectionHeading(source, index)}`,
      this.say(pick(this.style.sourceLeads, index), { file }),
      `> ${source.quote} — *from ${source.fileName}*${citation}`,
    ];
    if (source.keySentences.length > 0) {
      if (this.style.bullets) {
        parts.push(`Key points from ${file}:`, source.keySentences.map((s) => `- ${s}`).join('\n'));
      } else {
        parts.push(`${this.say(this.style.morePoints)} ${source.keySentences.join(' ')} ${this.cite(source)}`);
      }
    }
    if (index % 2 === 0) parts.push(this.nextCloser());
    return parts.join('\n\n');
  }

  /** Topic-only sections, paragraph by paragraph, until the word budget is spent. */
  private aspectSections(budget: number): string[] {
    const sections: string[] = [];
    let used = 0;
    for (const [aspectIndex, aspect] of ASPECTS.entries()) {
      const paragraphs: string[] = [];
      for (const [i, template] of aspect.paragraphs.entries()) {
        const paragraph = this.say(i === 0 ? this.withConnector(template) : template);
        const cost = countWords(paragraph) + (i === 0 ? 4 : 0);
        // Overshoot by at most half a paragraph rather than stop well short of the target.
        if (used + cost / 2 > budget) break;
        paragraphs.push(paragraph);
        used += cost;
      }
      if (paragraphs.length === 0) break;
      if (aspectIndex % 3 === 0) paragraphs[paragraphs.length - 1] += ` ${this.nextCloser()}`;
      sections.push(`## ${titleCase(fill(this.style.aspectHeadings[aspect.id], this.vars))}\n\n${paragraphs.join('\n\n')}`);
    }
    return sections;
  }

  private examples(): string[] {
    const quoted = new Set(this.sources.flatMap((s) => [s.quote, ...s.keySentences]));
    const fromSources = this.sources
      .flatMap((source) =>
        source.sentences
          .filter((s) => !quoted.has(s) && EXAMPLE_MARKERS.test(s))
          .map((s) => `**From ${source.fileName}:** ${s} ${this.cite(source)}`),
      )
      .slice(0, MAX_SOURCE_EXAMPLES);
    const generic = GENERIC_EXAMPLES.map((template) => this.say(template));
    const items = [...fromSources, ...generic].slice(0, EXAMPLE_COUNT);
    return [
      `## ${this.style.examplesHeading}`,
      `${this.say(this.style.examplesLead)}\n\n${items.map((item, i) => `${i + 1}. ${item}`).join('\n')}`,
    ];
  }

  private conclusion(): string[] {
    const { k1, k2, k3 } = this.vars;
    const summary = [
      this.say(this.withConnector(`{Topic} comes down to doing a handful of things well, above all ${k1}, ${k2} and ${k3}.`)),
    ];
    if (this.sources.length > 0) {
      summary.push(this.say('The sources quoted above show how these ideas play out in practice.'));
    }
    summary.push(this.say(this.tone.conclusion));
    const blocks = [`## ${this.style.conclusionHeading}`, summary.join(' ')];
    if (this.style.bullets) {
      blocks.push(
        [
          `- **${capitalize(k1)}:** establish a baseline and measure it.`,
          `- **${capitalize(k2)}:** change one variable at a time.`,
          `- **${capitalize(k3)}:** document what works so it can be repeated.`,
        ].join('\n'),
      );
    }
    if (this.tone.callToAction) blocks.push(this.say(this.tone.callToAction));
    if (this.style.numberedCitations && this.sources.length > 0) {
      blocks.push('## References', this.sources.map((s) => `${s.ref}. ${s.fileName}`).join('\n'));
    }
    return blocks;
  }
}
