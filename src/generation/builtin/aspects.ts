/**
 * Topic-only phrase banks: sections and examples that need no source, in the placeholders of
 * voices.ts ({topic}, {Topic}, {k1}-{k3}).
 */

export type AspectId =
  | 'why'
  | 'core'
  | 'start'
  | 'pitfalls'
  | 'practices'
  | 'tools'
  | 'measuring'
  | 'tradeoffs'
  | 'applying'
  | 'growth'
  | 'ahead';

/** Topic-only sections, used to reach the word target when the sources run out. */
export const ASPECTS: readonly { id: AspectId; paragraphs: readonly string[] }[] = [
  {
    id: 'why',
    paragraphs: [
      '{Topic} shapes results in ways that are easy to underestimate. Small decisions about {k1} compound over time, and the difference between a rushed approach and a deliberate one shows up quickly. Understanding the reasons behind each step makes the whole subject easier to reason about.',
      'There is also a cost to getting it wrong. Inconsistent habits around {k2} lead to results that are hard to repeat, and the causes are rarely obvious at first. A clear mental model turns guesswork into a process that can be checked and improved.',
      'The subject rarely stands alone, either. It connects to {k3} and to the wider goals it is meant to serve, so progress in one place tends to unlock progress elsewhere.',
      'Most importantly, the effort pays back quickly. A little structure early on saves a great deal of correction later, and the confidence that comes from understanding the subject makes every later decision easier.',
    ],
  },
  {
    id: 'core',
    paragraphs: [
      '{Topic} rests on a few ideas that reinforce one another. The first is {k1}, which sets the baseline that everything else builds on. The second is {k2}, which determines how reliably good results can be repeated.',
      'A third idea is balance. Pushing too hard on any single factor usually costs something elsewhere, so the aim is a combination that holds up in everyday conditions rather than a perfect score on one measure.',
      'Context matters as well. The same technique can work brilliantly in one setting and poorly in another, so every rule of thumb about {k3} should be read together with the conditions it was written for.',
      'These ideas are simple to state and harder to apply consistently. Writing them down, even as a short checklist, keeps them visible when time is short and shortcuts look tempting.',
    ],
  },
  {
    id: 'start',
    paragraphs: [
      'The best way to begin with {topic} is to start small. Pick one part of the process, define what a good result looks like, and repeat it until it feels routine before adding anything new.',
      'Gather the essentials before worrying about refinements. A reliable setup for {k1}, a simple way to record what was tried and a fixed point of comparison matter more than any advanced technique.',
      'Set a realistic rhythm. Short, regular sessions with a clear goal are easier to sustain than long ones, and they leave time to reflect on what each attempt taught.',
      'Expect the first attempts to be uneven. That is normal: each round produces information, and a short note about what changed and what happened is worth more than memory alone.',
    ],
  },
  {
    id: 'pitfalls',
    paragraphs: [
      'The most common mistake is changing several things at once. When results shift, it becomes impossible to tell which change made the difference, and useful lessons get lost.',
      'Another frequent problem is neglecting {k2}. It rarely fails dramatically; instead, quality drifts slowly until the gap becomes too large to ignore and much harder to correct.',
      'It is also easy to copy a recipe without understanding why it works. Advice about {topic} is always written for particular conditions, and it needs adjusting when those conditions differ.',
      'A subtler trap is perfectionism. Waiting for ideal conditions before starting delays the feedback that would have shown what actually matters, and it turns a learnable skill into a source of stress.',
    ],
  },
  {
    id: 'practices',
    paragraphs: [
      'Consistency beats intensity. A modest routine around {k1}, followed every time, produces better results than occasional bursts of effort, and it makes problems far easier to spot.',
      'Measure before adjusting. Whether the question concerns {k2} or {k3}, a quick check against a known reference prevents a lot of wasted work and keeps discussions grounded in facts.',
      'Keep the process simple enough to explain. If a step cannot be justified in a sentence, it is a candidate for removal, and the remaining steps become easier to follow.',
      'Review and refine on a schedule. A short look back every few weeks, asking what worked, what did not and what to try next, keeps improvement deliberate instead of accidental.',
    ],
  },
  {
    id: 'tools',
    paragraphs: [
      'The right tools make {topic} easier, but they are rarely the deciding factor. A simple, reliable setup that is used consistently beats an elaborate one that is used occasionally.',
      'When choosing tools for {k1}, favour accuracy and repeatability over features. A tool that produces the same result every time makes it possible to see the effect of every other change.',
      'Resources matter as much as equipment. Good reference material, a few trusted examples and a place to keep notes turn isolated attempts into a body of knowledge that grows over time.',
    ],
  },
  {
    id: 'measuring',
    paragraphs: [
      'Progress with {topic} is easier to see when it is measured. Choose one or two indicators that reflect the result that matters, and record them the same way each time.',
      'Numbers are only part of the picture. Qualitative notes about {k1}, such as what looked or felt different, often explain a change that the figures only hint at.',
      'Review the record regularly. Patterns that are invisible in a single attempt become obvious across ten, and they point directly to the next improvement worth making.',
    ],
  },
  {
    id: 'tradeoffs',
    paragraphs: [
      'Every approach to {topic} involves trade-offs. Speed competes with quality, flexibility with consistency, and the effort spent on {k1} is effort not spent elsewhere.',
      'The right balance depends on the goal. A quick, good-enough result is sometimes exactly what is needed, while at other times careful attention to {k2} is worth every extra minute.',
      'Making trade-offs explicit helps. When the priorities are written down, decisions become easier to explain, and revisiting them later is a matter of checking whether the priorities have changed.',
    ],
  },
  {
    id: 'applying',
    paragraphs: [
      'Real conditions shape {topic} through constraints: limited time, imperfect tools and competing priorities. A good approach accepts those limits and still protects the steps that matter most.',
      'One useful habit is to separate routine work from experiments. Routine work follows the proven process for {k1}; experiments change one variable at a time and are clearly labelled as such.',
      'Sharing what works also pays off. A short write-up of a successful approach to {k2} saves others from repeating the same trial and error, and invites improvements in return.',
      'Finally, adapt the approach to the people involved. What works for an expert may overwhelm a beginner, so the same principles about {k3} often need different levels of detail for different readers.',
    ],
  },
  {
    id: 'growth',
    paragraphs: [
      'Expertise in {topic} grows through repetition with reflection. Each attempt is a small experiment, and the lessons from many small experiments add up to a depth of understanding no single guide can provide.',
      'Early progress tends to be fast, then it slows. That plateau is normal: it signals that the obvious gains have been made and that further improvement depends on finer attention to {k1} and {k2}.',
      'Learning from others accelerates the process. Comparing notes, reading widely and asking why an approach works shortens the path from beginner to confident practitioner.',
    ],
  },
  {
    id: 'ahead',
    paragraphs: [
      '{Topic} keeps evolving as tools, knowledge and expectations change. Staying curious and revisiting assumptions every so often keeps a working approach from going stale.',
      'The fundamentals, however, change slowly. Attention to {k1}, {k2} and {k3} will remain relevant, even as the details of how they are handled continue to improve.',
      'Whatever changes, the habit of careful observation will stay valuable. It is the one skill that makes every new technique easier to evaluate and adopt.',
    ],
  },
];

export const GENERIC_EXAMPLES: readonly string[] = [
  '**Starting small with {k1}:** take one part of {topic}, apply the advice for a week, and compare the result with the previous approach.',
  '**Troubleshooting {k2}:** when results disappoint, change a single variable, starting with {k2}, and note exactly what happens.',
  '**Making it repeatable:** once an approach works, write it down as a short checklist so it can be repeated, shared and improved.',
];

/** Stand-ins for source keywords: topic words alone make poor nouns ("decisions about remote"). */
export const FALLBACK_FOCUS: readonly string[] = ['preparation', 'technique', 'the details'];
