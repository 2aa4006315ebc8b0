// A third grounding evaluation, written on 2026-11-30 after the relevance rules, by a writer who
// saw neither the rules nor the other sets: 12 documents of test/fixtures/grounding-third on
// fields of life the other sets do not touch (pottery, chess, an older cat, sailing knots,
// moving house, fermenting, car tyres, Ljubljana, Mary Anning, bouldering, a fabric price list,
// a chess app's release notes), and 48 topics, eight of each kind, with the documents a person
// would hand a writer for each, judged by reading the documents (their README notes the
// borderline calls). No rule has been changed against it: it is held out whole (figures only;
// --show-held-out prints its topics), so it says whether the rules carry over to a set nobody
// tuned them on. A second reader, judging every topic blind (from the documents' text and the
// topics alone), judged all 48 the same.
//
// Kinds: direct, synonym (a thesaurus's word for the document's: "pottery furnace" for
// "kiln"), name (a rare name the document is about), paraphrase, question, and generic
// (shares a word by chance, no document is relevant).

/** The documents, relative to test/fixtures/grounding-third. */
export const DOCUMENTS = [
  'bouldering_for_beginners.md',
  'car_tyre_checks.txt',
  'chess_openings_for_beginners.md',
  'fabric_price_list.csv',
  'kiln_firing_guide.md',
  'ljubljana_city_guide.md',
  'mary_anning.md',
  'moving_house_checklist.md',
  'older_cat_care.md',
  'rookwise_4.1_release_notes.md',
  'sailing_knots.txt',
  'sauerkraut_fermentation.md',
];

const t = (kind, topic, relevant) => ({ kind, topic, relevant });

/** Topics, each with the documents a person would hand a writer for a post on it. */
export const TOPICS = [
  t('direct', 'Bisque firing and glaze firing in an electric kiln', ['kiln_firing_guide.md']),
  t('direct', 'Essential sailing knots: bowline, cleat hitch and figure-eight', ['sailing_knots.txt']),
  t('direct', 'How to make sauerkraut at home', ['sauerkraut_fermentation.md']),
  t('direct', 'Checking tyre tread depth and pressure', ['car_tyre_checks.txt']),
  t('direct', 'Bouldering grades explained: the V-scale and Font', ['bouldering_for_beginners.md']),
  t('direct', 'Caring for an older cat', ['older_cat_care.md']),
  t('direct', 'Moving house checklist: eight weeks to moving day', ['moving_house_checklist.md']),
  t('direct', 'Chess opening principles for beginners', ['chess_openings_for_beginners.md']),
  t('synonym', 'Firing schedules for a pottery furnace', ['kiln_firing_guide.md']),
  t('synonym', 'Feeding an ageing feline', ['older_cat_care.md']),
  t('synonym', 'A relocation plan for families', ['moving_house_checklist.md']),
  t('synonym', 'Making cultured cabbage in a crock', ['sauerkraut_fermentation.md']),
  t('synonym', 'Choosing cloth for a winter coat', ['fabric_price_list.csv']),
  t('synonym', 'Lightweight textiles for summer dressmaking', ['fabric_price_list.csv']),
  t('synonym', 'Essential rope ties for yachting crews', ['sailing_knots.txt']),
  t('synonym', 'Understanding difficulty ratings at the climbing wall', ['bouldering_for_beginners.md']),
  t('name', 'What changed in Rookwise 4.1?', ['rookwise_4.1_release_notes.md']),
  t('name', "Using Rookwise 4.1's opening trainer to learn the Italian Game", ['rookwise_4.1_release_notes.md', 'chess_openings_for_beginners.md']),
  t('name', 'Mary Anning: a short biography', ['mary_anning.md']),
  t('name', 'A fossil walk at Lyme Regis', ['mary_anning.md']),
  t('name', 'Three days in Ljubljana', ['ljubljana_city_guide.md']),
  t('name', 'The architecture of Jože Plečnik', ['ljubljana_city_guide.md']),
  t('name', 'Reading Orton cones', ['kiln_firing_guide.md']),
  t('name', 'Playing the Giuoco Piano as White', ['chess_openings_for_beginners.md']),
  t('paraphrase', 'What really happens to your mugs at 1,200°C', ['kiln_firing_guide.md']),
  t('paraphrase', 'Sour, crunchy and alive: preserving the harvest with microbes', ['sauerkraut_fermentation.md']),
  t('paraphrase', 'Is your car still gripping the road when it rains?', ['car_tyre_checks.txt']),
  t('paraphrase', 'Getting started in ropeless climbing', ['bouldering_for_beginners.md']),
  t('paraphrase', 'A working-class woman who changed how scientists saw extinct life', ['mary_anning.md']),
  t('paraphrase', 'Packing up one home and settling into the next', ['moving_house_checklist.md']),
  t('paraphrase', 'Securing a dinghy to the dock: what every new deckhand should practise', ['sailing_knots.txt']),
  t('paraphrase', 'The first ten moves: getting your pieces out quickly', ['chess_openings_for_beginners.md']),
  t('question', 'How long does sauerkraut take to ferment?', ['sauerkraut_fermentation.md']),
  t('question', 'How often should a senior cat see the vet?', ['older_cat_care.md']),
  t('question', 'What does 205/55 R16 91V on a tyre sidewall mean?', ['car_tyre_checks.txt']),
  t('question', 'Why did my glaze crawl off the pot in the kiln?', ['kiln_firing_guide.md']),
  t('question', 'Do I need my own shoes to start bouldering?', ['bouldering_for_beginners.md']),
  t('question', 'How do I move house with a cat without stressing it?', ['moving_house_checklist.md', 'older_cat_care.md']),
  t('question', 'How much does a metre of linen cost compared with cotton?', ['fabric_price_list.csv']),
  t('question', 'Which knot should I use to hang fenders from the guardrail?', ['sailing_knots.txt']),
  t('generic', 'How to tie a Windsor knot for a job interview', []),
  t('generic', 'Regrouting the ceramic tiles in your bathroom', []),
  t('generic', 'Fossil fuels and the energy transition', []),
  t('generic', "Moving meditation: a beginner's guide to tai chi", []),
  t('generic', 'Caring for a pet rabbit in winter', []),
  t('generic', 'Learn to play the piano as an adult', []),
  t('generic', "How to clean your car's interior", []),
  t('generic', 'How much water should adults drink each day?', []),
];

/** The kinds, in the order the tables show them. */
export const KINDS = ['direct', 'synonym', 'name', 'paraphrase', 'question', 'generic'];
