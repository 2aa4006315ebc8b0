/**
 * Composition of a post: with relevant sources, their own sentences grouped into sections,
 * framed by a short introduction and conclusion in the style's and tone's voice; without, an
 * honest outline draft that says what each section should cover.
 */

import { MAX_TITLE_LENGTH } from '../../limits.js';
import { passagesToGroundOn, topicProfile } from '../relevance.js';
import { WORD_TARGETS, type GeneratedPost, type GenerationRequest } from '../types.js';
import { OUTLINE, OUTLINE_CONCLUSION, OUTLINE_EXAMPLES, OUTLINE_SECTIONS } from './aspects.js';
import { deriveCategory, deriveTags, digest, type Digest, type Fact, type Section } from './digest.js';
import { analyseTopic, midSentence, type Topic } from './topic.js';
import { contentWords, isBareHeading, TAKEAWAY_LEAD, takesTransition, transitionOf, TRANSITIONS, withTransition } from './prose.js';
import { tagWords } from '../../text/nlp.js';
import { capitalize, contract, countWords, fill, hashString, listOf, pick, titleCase, unique } from './text.js';
import { STYLE_VOICES, TONE_VOICES, type StyleVoice, type ToneVoice } from './voices.js';

/** Paragraphs hold at most this many source sentences. */
const PARAGRAPH_SENTENCES = 4;
/** Key terms named in the conclusion. */
const CONCLUSION_TERMS = 4;
/** The introduction names the sections when there are at most this many. */
const OVERVIEW_SECTIONS = 3;
/** A short post drawing on fewer words of the sources than this leaves the audience line out. */
const THIN_SHORT_WORDS = 150;
/** Below this share of the word target, the description says why the post is short. */
const SHORT_SHARE = 0.75;
/** Passage text read for how the sources write the topic's words (capitals). */
const CASING_EVIDENCE_CHARS = 20_000;

const LONG_CLOSING = 'Take the points above one at a time, and come back to them as you go.';
/** A focus longer than this reads badly in a heading: the topic's first noun phrase is used instead. */
const MAX_FOCUS_WORDS = 5;

/**
 * The topic, short: its words up to the first preposition after a noun ("brewing better coffee"
 * of "how to brew better coffee at home", "camping gear" of "camping gear for a weekend trip").
 */
function focusOf(topic: Topic): string {
  const words = tagWords(topic.subject, { lowerFirst: false });
  let end = words.length;
  let sawNoun = false;
  for (const [i, word] of words.entries()) {
    if (sawNoun && ['ADP', 'SCONJ', 'PUNCT', 'AUX', 'VERB'].includes(word.pos)) {
      end = i;
      break;
    }
    if (word.pos === 'NOUN' || word.pos === 'PROPN') sawNoun = true;
  }
  const focus = words.slice(0, end).map((w, i) => (i > 0 && w.spaceBefore ? ' ' : '') + w.text).join('').replace(/^(?:the|a|an) /i, '');
  if (!sawNoun || focus.split(' ').length > MAX_FOCUS_WORDS || topic.kind === 'question') return topic.phrases[0]?.replace(/^(?:the|a|an) /i, '') ?? focus;
  return focus;
}

export class Composer {
  private readonly style: StyleVoice;
  private readonly tone: ToneVoice;
  private readonly seed: number;
  private readonly topic: Topic;
  private readonly digest: Digest;
  private readonly vars: Record<string, string>;
  private readonly sourceText: string;
  /** What the topic is about, short, mid-sentence ("brewing better coffee", "camping gear"): headings name it. */
  private readonly focus: string;
  /** Transitions given so far (they take turns). */
  private transitions = 0;

  constructor(private readonly req: GenerationRequest) {
    this.style = STYLE_VOICES[req.style];
    this.tone = TONE_VOICES[req.tone];
    const passages = passagesToGroundOn(req);
    this.sourceText = passages.map((p) => p.text).join('\n').slice(0, CASING_EVIDENCE_CHARS);
    this.topic = analyseTopic(req.topic, this.sourceText);
    this.seed = hashString(this.topic.text.toLowerCase());
    const target = WORD_TARGETS[req.length];
    this.digest = digest(this.topic, topicProfile(this.topic.text), passages, req.length, target, req.includeExamples);

    const { topic } = this;
    this.focus = focusOf(topic);
    const keys = this.keyTerms();
    const defaultAudience = topic.kind === 'question' ? 'anyone who has wondered the same' : 'anyone getting started';
    this.vars = {
      subject: topic.subject,
      Subject: capitalize(topic.subject),
      how: topic.how ?? topic.subject,
      question: topic.question ?? `${topic.subject}?`,
      Question: capitalize(topic.question ?? `${topic.subject}?`),
      is: topic.plural ? 'are' : 'is',
      s: topic.plural ? '' : 's',
      its: topic.plural ? 'their' : 'its',
      them: topic.plural ? 'them' : 'it',
      It: topic.plural ? 'They' : 'It',
      audience: req.targetAudience?.trim() || defaultAudience,
      Title: topic.title,
      // Inside a title ("Rethinking the Future of Remote Work") a leading article is a small word.
      TitleSubject: (topic.titleSubject ?? topic.title).replace(/^(The|A|An) /, (article) => article.toLowerCase()),
      keys: listOf(keys),
      firstKey: keys[0] ?? topic.subject,
    };
  }

  /** The post, and the writer's notes on it (for staff: never in the post itself). */
  compose(): { post: GeneratedPost; notes: string[]; outline: boolean; sources: string[] } {
    const grounded = this.digest.sections.length > 0;
    const content = grounded ? this.groundedContent() : this.outlineContent();
    const category = deriveCategory(this.topic.words, this.digest.keyTerms);
    const post = {
      title: this.title(),
      description: this.description(),
      category,
      tags: deriveTags(this.topic, [...this.digest.keyTerms, ...this.digest.minorTerms], category),
      content: `${content.join('\n\n')}\n`,
    };
    const notes = grounded ? this.groundedNotes(content) : this.outlineNotes();
    return { post, notes, outline: !grounded, sources: grounded ? [...this.digest.files] : [] };
  }

  // ---------------------------------------------------------------------------------------------
  // The writer's own words

  /** The writer's own prose, in the style's register (the sources' words never pass here). */
  private say(template: string, extra: Record<string, string> = {}): string {
    const text = fill(template, { ...this.vars, ...extra });
    return this.style.contractions ? contract(text) : text;
  }

  /** Key terms for the conclusion: noun phrases without figures, not the topic's own. */
  private keyTerms(): string[] {
    const topicKeys = new Set(this.topic.phrases.map((p) => p.toLowerCase()));
    const terms = this.digest.keyTerms
      .map((p) => p.text)
      .filter((text) => !/\d/.test(text) && !topicKeys.has(text.toLowerCase()) && text.length <= 40);
    return unique(terms.map((t) => t.toLowerCase())).slice(0, CONCLUSION_TERMS).map((lower) => terms.find((t) => t.toLowerCase() === lower)!);
  }

  private title(): string {
    // A topic that names the post's form is the title as it stands ("A Beginner's Guide to Home Brewing").
    if (this.topic.framed) return this.topic.title.slice(0, MAX_TITLE_LENGTH);
    const options = this.topic.kind === 'question' ? this.style.titles : [...this.style.titles, ...this.style.subjectTitles];
    let title = fill(pick(options, this.seed), this.vars);
    // After a question mark, no colon or comma: "What Makes a Good Pour-over? A Closer Look".
    title = title.replace(/\?[:,] /, '? ');
    return title.slice(0, MAX_TITLE_LENGTH);
  }

  private cite(fileName: string): string {
    return this.style.numberedCitations ? `[${this.digest.files.indexOf(fileName) + 1}]` : `(source: *${fileName}*)`;
  }


  // ---------------------------------------------------------------------------------------------
  // A post from the sources

  private groundedContent(): string[] {
    const { sections, examples } = this.digest;
    const titles = sections.map((s) => midSentence(s.title, this.sourceText));
    const intro = [this.say(this.tone.opener[this.topic.kind])];
    // The parts it covers, named when they are few and each is a phrase of its own.
    if (sections.length >= 2 && sections.length <= OVERVIEW_SECTIONS && !sections.some((s) => isBareHeading(s.title))) intro.push(this.say(`It looks at ${listOf(titles)}.`));
    // A short post on little source text keeps to the point: no line on who it is for, unless the request named them.
    if (this.req.length !== 'short' || this.digest.usedWords > THIN_SHORT_WORDS || this.req.targetAudience?.trim()) intro.push(this.say(this.style.audience));

    const blocks = [intro.join(' ')];
    for (const section of sections) blocks.push(this.section(section));
    if (this.req.includeExamples) blocks.push(...this.examples(examples));
    blocks.push(...this.conclusion());
    return blocks;
  }

  private section(section: Section): string {
    const parts = [`## ${titleCase(capitalize(this.sectionTitle(section)))}`];
    // Runs of facts from one file, each run attributed once.
    let run: Fact[] = [];
    const flush = () => {
      if (run.length) parts.push(...this.run(run));
      run = [];
    };
    for (const fact of section.facts) {
      if (run.length && run[0]!.fileName !== fact.fileName) flush();
      run.push(fact);
    }
    flush();
    return parts.join('\n\n');
  }

  /** A run of facts from one file: paragraphs of sentences, lists of items and records. */
  private run(facts: readonly Fact[]): string[] {
    const cite = this.cite(facts[0]!.fileName);
    const blocks: string[] = [];
    let paragraph: string[] = [];
    let list: string[] = [];
    const flushParagraph = () => {
      if (paragraph.length) blocks.push(paragraph.join(' '));
      paragraph = [];
    };
    const flushList = () => {
      if (list.length) blocks.push(list.join('\n'));
      list = [];
    };
    for (const fact of facts) {
      const asItem = fact.kind !== 'sentence' || this.style.bullets;
      if (asItem) {
        flushParagraph();
        list.push(`- ${this.itemText(fact)}`);
      } else {
        flushList();
        if (paragraph.length >= PARAGRAPH_SENTENCES) flushParagraph();
        paragraph.push(this.joined(fact.text, paragraph));
      }
    }
    flushParagraph();
    flushList();
    // The attribution closes the run: after a paragraph's last sentence, or below a list.
    const last = blocks.length - 1;
    if (blocks[last]!.startsWith('- ')) blocks.push(this.style.numberedCitations ? cite : `Source: *${facts[0]!.fileName}*.`);
    else blocks[last] = `${blocks[last]} ${cite}`;
    return blocks;
  }

  /**
   * A source sentence as it joins the paragraph before it: every other one opens with a
   * transition ("Also, ..."), when its first word can lose its capital.
   */
  private joined(sentence: string, paragraph: readonly string[]): string {
    if (paragraph.length === 0 || transitionOf(paragraph.at(-1)!) !== null) return sentence;
    if (!takesTransition(sentence)) return sentence;
    const transition = TRANSITIONS[(this.seed + this.transitions++) % TRANSITIONS.length]!;
    return withTransition(sentence, transition);
  }

  /**
   * A section's heading: the source's heading or shared noun phrase when it is a phrase; a bare
   * noun ("Water", "Cleaning") becomes a phrase about the topic ("Brewing Better Coffee: Water").
   */
  private sectionTitle(section: Section): string {
    if (!isBareHeading(section.title)) return section.title;
    const word = contentWords(section.title)[0];
    const focusWords = new Set(contentWords(this.focus));
    if (word && !focusWords.has(word) && this.focus) return `${capitalize(this.focus)}: ${capitalize(section.title)}`;
    // The topic's own word: the longest phrase of the section's facts that holds it, else the topic's basics.
    const phrase = section.facts
      .flatMap((f) => f.phrases)
      .map((p) => p.text)
      .filter((text) => text.includes(' ') && !/\d/.test(text) && (!word || text.toLowerCase().includes(word)) && !isBareHeading(text))
      .sort((a, b) => b.length - a.length)[0];
    return phrase ?? `the basics of ${this.focus || this.topic.subject}`;
  }

  private itemText(fact: Fact): string {
    if (fact.kind !== 'record' || !fact.record) return fact.text;
    const { title, body, details } = fact.record;
    const extra = details.length ? ` (${details.map(([key, value]) => `${key.replace(/_/g, ' ')}: ${value}`).join('; ')})` : '';
    return `**${title}**${extra}${body ? `: ${body}` : ''}`;
  }

  private examples(examples: readonly Fact[]): string[] {
    const heading = `## ${this.style.examplesHeading}`;
    if (examples.length === 0) {
      return [heading, this.say('The sources give no worked example of {subject} yet; a case from your own experience would fit here.')];
    }
    const items = examples.map((fact, i) => `${i + 1}. ${this.itemText(fact)} ${this.cite(fact.fileName)}`);
    return [heading, `${this.say(this.style.examplesLead)}\n\n${items.join('\n')}`];
  }

  private conclusion(): string[] {
    const keys = this.keyTerms();
    const line = keys.length >= 2 ? this.tone.conclusion[this.topic.kind] : this.tone.shortConclusion[this.topic.kind];
    const { takeaway } = this.digest;
    // A long post on as little source as a medium one still closes at more length than it.
    const said = this.digest.sameAsMedium ? `${this.say(line)} ${this.say(LONG_CLOSING)}` : this.say(line);
    const closing = takeaway ? `${said} ${this.say(TAKEAWAY_LEAD)} ${takeaway.text} ${this.cite(takeaway.fileName)}` : said;
    const blocks = [`## ${this.style.conclusionHeading}`, closing];
    if (this.tone.callToAction) blocks.push(this.say(this.tone.callToAction));
    if (this.style.numberedCitations) blocks.push('## References', this.digest.files.map((file, i) => `${i + 1}. ${file}`).join('\n'));
    return blocks;
  }

  /** What the post is about, for readers: the writer's notes on its sources stay out of it. */
  private description(): string {
    return this.say(this.topic.framed ? this.style.framedDescription : this.style.description[this.topic.kind]);
  }

  /** For staff: the documents drawn on, and why the post is short when it is. */
  private groundedNotes(content: readonly string[]): string[] {
    const { files, availableWords } = this.digest;
    const notes = [files.length === 1 ? `Drawn from ${files[0]}.` : `Drawn from ${files.length} documents in the knowledge base: ${files.join(', ')}.`];
    const target = WORD_TARGETS[this.req.length];
    if (countWords(content.join('\n')) < target * SHORT_SHARE) {
      const about = Math.max(10, Math.round(availableWords / 10) * 10);
      notes.push(`Shorter than a ${this.req.length} post: the knowledge base has only about ${about} words on this topic.`);
    }
    return notes;
  }

  // ---------------------------------------------------------------------------------------------
  // An outline draft

  private outlineContent(): string[] {
    // The marker tells the person who opens the draft that it is still to be written.
    const blocks = [`*Outline draft.* ${this.say(this.tone.outlineOpener[this.topic.kind])} ${this.say(this.style.audience)}`];
    const sections = OUTLINE[this.topic.kind].slice(0, OUTLINE_SECTIONS[this.req.length]);
    for (const section of sections) blocks.push(`## ${titleCase(this.say(section.heading))}`, `*To cover:* ${this.say(section.cover)}`);
    if (this.req.includeExamples) blocks.push(`## ${this.style.examplesHeading}`, `*To cover:* ${this.say(OUTLINE_EXAMPLES.cover)}`);
    blocks.push(`## ${this.style.conclusionHeading}`, `*To cover:* ${this.say(OUTLINE_CONCLUSION.cover)}`);
    return blocks;
  }

  /** For staff: why there is no post yet (nothing on the topic, or only tables and figures to quote). */
  private outlineNotes(): string[] {
    const files = unique(this.digest.passages.map((p) => p.fileName));
    const why =
      files.length === 0
        ? 'Outline draft: no document in the knowledge base covers the topic yet, so instead of claims without a source, each section says what it should cover. Add a document on the topic and generate the post again to have it written from that document.'
        : `Outline draft: the knowledge base mentions the topic in ${listOf(files)}, but only in tables, lists or fragments with no sentence to quote, so instead of claims without a source, each section says what it should cover.`;
    return [why, 'An outline stays a draft until a person writes the post.'];
  }
}
