/**
 * English stopwords, shared by the knowledge search and the builtin composer.
 *
 * The first group is function words: nearly every passage contains them, so OR-ing them into a
 * full-text query makes BM25 score most of the index for nothing, and they make no keyword.
 * The second group is generic words ("best", "new", "way", "use") that say nothing about a
 * subject: as a keyword, tag or heading they read badly ("Getting Best Right").
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between
  both but by can could did do does doing down during each even few for from further get gets had has have having he
  her here hers herself him himself his how however i if in into is it its itself just let like made make makes many
  may me might more most much must my myself no nor not now of off often on once one only or other our ours ourselves
  out over own per same she should so some such than that the their theirs them themselves then there these they this
  those through to too under until up upon us use used uses using very via was way ways we well were what when where
  which while who whom why will with within without would yet you your yours yourself yourselves

  able across already always another anyone anything around away back best better come done every first good great
  keep know last less little long lot lots need new next old part really right say see seem seems several since
  still take thing things think two want whether`
    .split(/\s+/)
    .filter((word) => word !== ''),
);
