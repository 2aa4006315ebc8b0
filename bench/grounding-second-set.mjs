// The second grounding evaluation, written apart from the relevance rules (issue: the rules had
// been fitted to grounding-set.mjs): 14 documents of test/fixtures/grounding-second on other
// fields of life (running, plumbing, a browser's release notes, travel, a biography, fishkeeping,
// music, first aid, tax, birds, boots, cookware, genealogy), and topics a person might ask for,
// each with the documents they would hand a writer for it. The documents and judgments were
// written before any rule was changed against them, by reading the documents only.
//
// Kinds of topic, beyond those of grounding-set.mjs:
//   synonym  the topic says it in words a thesaurus gives for the document's ("rain barrel" for
//            "water butt", "faucet" for "tap", "fish tank" for "aquarium")
//   name     a rare name (a product, a place, a person) the document is about, the rest generic
//   generic  shares a generic word ("care", "water", "history", "learn") and nothing else
//
// A second reader, judging every topic blind (from the documents' text and the topics alone,
// without these judgments or any result), judged all 52 the same.
//
// The topics are split in two. TOPICS are those the rules may be tuned against (their results
// are printed one by one). HELD_OUT are reported as figures only, and were not looked at one by
// one while the rules were tuned: they say whether the rules carry over to topics not seen.

/** The documents, relative to test/fixtures/grounding-second. */
export const DOCUMENTS = [
  'first-marathon-guide.md', 'water-butt-guide.md', 'dripping-tap-repair.txt', 'larkspur-130-release-notes.md', 'lisbon-three-days.md',
  'ada-lovelace.md', 'freshwater-aquarium-setup.md', 'guitar-first-chords.txt', 'burns-first-aid.md', 'freelance-tax-return.md',
  'garden-birds-feeding.md', 'leather-boots-care.md', 'cast-iron-skillet.txt', 'tracing-family-tree.md',
];

const MARATHON = 'first-marathon-guide.md';
const WATER_BUTT = 'water-butt-guide.md';
const TAP = 'dripping-tap-repair.txt';
const LARKSPUR = 'larkspur-130-release-notes.md';
const LISBON = 'lisbon-three-days.md';
const ADA = 'ada-lovelace.md';
const AQUARIUM = 'freshwater-aquarium-setup.md';
const GUITAR = 'guitar-first-chords.txt';
const BURNS = 'burns-first-aid.md';
const TAX = 'freelance-tax-return.md';
const BIRDS = 'garden-birds-feeding.md';
const BOOTS = 'leather-boots-care.md';
const SKILLET = 'cast-iron-skillet.txt';
const FAMILY_TREE = 'tracing-family-tree.md';

const t = (kind, topic, relevant) => ({ kind, topic, relevant });

/** Topics the rules may be tuned against. */
export const TOPICS = [
  t('synonym', 'Setting up a rain barrel for a small vegetable garden', [WATER_BUTT]),
  t('synonym', 'How to fix a leaky faucet', [TAP]),
  t('synonym', 'Caring for a cast-iron frying pan', [SKILLET]),
  t('synonym', 'Genealogy for beginners', [FAMILY_TREE]),
  t('synonym', 'Keeping a fish tank healthy', [AQUARIUM]),

  t('name', 'What changed in Larkspur 130?', [LARKSPUR]),
  t('name', 'A weekend in Lisbon', [LISBON]),
  t('name', 'Who was Ada Lovelace?', [ADA]),
  t('name', 'Larkspur privacy features', [LARKSPUR]),

  t('paraphrase', 'Your first long race', [MARATHON]),
  t('paraphrase', 'Harvesting rainwater from your roof', [WATER_BUTT]),
  t('paraphrase', 'Treating a scald from a kettle', [BURNS]),
  t('paraphrase', 'Sorting out your self-assessment as a self-employed designer', [TAX]),
  t('paraphrase', 'Attracting songbirds to your backyard', [BIRDS]),
  t('paraphrase', 'Making walking boots last longer', [BOOTS]),
  t('paraphrase', 'Finding out about your ancestors', [FAMILY_TREE]),
  t('paraphrase', 'Playing your first songs on an acoustic guitar', [GUITAR]),

  t('direct', 'Marathon tapering and race day', [MARATHON]),
  t('direct', 'The nitrogen cycle in a new aquarium', [AQUARIUM]),
  t('direct', 'Seasoning a cast iron skillet', [SKILLET]),
  t('direct', 'Waxing and conditioning leather boots', [BOOTS]),
  t('direct', 'Guitar chord changes and strumming', [GUITAR]),
  t('direct', 'Allowable expenses for freelancers', [TAX]),

  t('question', 'Should I put ice on a burn?', [BURNS]),
  t('question', 'How long does it take to cycle a fish tank?', [AQUARIUM]),
  t('question', 'What should I feed garden birds in winter?', [BIRDS]),

  t('generic', 'How to care for a new tattoo', []),
  t('generic', 'Drinking enough water at work', []),
  t('generic', 'A short history of the bicycle', []),
  t('generic', 'Learn to code in a weekend', []),
  t('generic', 'Caring for an elderly parent at home', []),
  t('generic', 'Water polo for beginners', []),
  t('generic', 'The history of jazz', []),
  t('generic', 'Learning to swim as an adult', []),
  t('generic', 'Choosing a mortgage', []),
  t('generic', 'Growing orchids indoors', []),
];

/** Held out: reported as figures only, never tuned against. */
export const HELD_OUT = [
  t('synonym', 'Installing a rainwater tank for the garden', [WATER_BUTT]),
  t('synonym', 'Replacing the washer in a leaking spigot', [TAP]),
  t('synonym', 'Cleaning a cast-iron frypan', [SKILLET]),
  t('name', 'Lisbon trams and viewpoints', [LISBON]),
  t('name', 'Charles Babbage and the Analytical Engine', [ADA]),
  t('name', 'Is Larkspur 130 faster?', [LARKSPUR]),
  t('paraphrase', 'Preparing for a 42-kilometre road race', [MARATHON]),
  t('paraphrase', 'Keeping tropical fish at home', [AQUARIUM]),
  t('paraphrase', 'Looking after a small burn at home', [BURNS]),
  t('paraphrase', 'Paying income tax when you work for yourself', [TAX]),
  t('question', 'How often should I clean a bird feeder?', [BIRDS]),
  t('question', 'Why do my fingertips hurt when I play guitar?', [GUITAR]),
  t('generic', 'Skin care routine for dry skin', []),
  t('generic', 'The history of the Olympic Games', []),
  t('generic', 'Learn photography on your phone', []),
  t('generic', 'Caring for a rescue cat', []),
];

export const KINDS = ['direct', 'synonym', 'name', 'paraphrase', 'question', 'generic'];
