// The generation options the API takes (src/limits.ts), as a person reads them.
export const STYLES = [['', 'Default'], ['professional', 'Professional'], ['casual', 'Casual'], ['technical', 'Technical'], ['creative', 'Creative'], ['academic', 'Academic']];
export const LENGTHS = [['', 'Default'], ['short', 'Short'], ['medium', 'Medium'], ['long', 'Long']];
export const TONES = [['', 'Default'], ['informative', 'Informative'], ['persuasive', 'Persuasive'], ['conversational', 'Conversational'], ['authoritative', 'Authoritative']];

/** The set options of a form's controls as an API body. */
export function generationOptions({ style, length, tone, audience, examples }) {
  const body = {};
  if (style.value) body.style = style.value;
  if (length.value) body.length = length.value;
  if (tone.value) body.tone = tone.value;
  if (audience.value.trim()) body.targetAudience = audience.value.trim();
  if (examples.checked) body.includeExamples = true;
  return body;
}
