import { api } from './api.js';
import { busy, field, h, heading, messageLine, select } from './ui.js';
import { LENGTHS, STYLES, TONES, generationOptions } from './options.js';

export function render(main, ctx) {
  ctx.setTitle('Generate');
  const topic = h('input', { type: 'text', required: true, maxlength: 500 });
  const controls = {
    style: select(STYLES, ''),
    length: select(LENGTHS, ''),
    tone: select(TONES, ''),
    audience: h('input', { type: 'text', maxlength: 200 }),
    examples: h('input', { type: 'checkbox', id: 'gen-examples' }),
  };
  const button = h('button', { type: 'submit' }, 'Generate');
  const working = h('p', { class: 'working', role: 'status', hidden: true }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Writing the post… this can take a minute.');
  const message = messageLine();
  const form = h(
    'form',
    { class: 'card' },
    field('Topic', topic, 'What the post is about; the knowledge base grounds it.'),
    h('div', { class: 'grid' }, field('Style', controls.style), field('Length', controls.length), field('Tone', controls.tone), field('Audience', controls.audience)),
    h('div', { class: 'check' }, controls.examples, h('label', { for: 'gen-examples' }, 'Include examples')),
    working,
    message.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    if (!topic.value.trim()) {
      message.error('Give the post a topic.');
      return topic.focus();
    }
    working.hidden = false;
    try {
      const data = await busy(button, () => api('POST', '/posts/generate', { topic: topic.value.trim(), ...generationOptions(controls) }), 'Generating…');
      // The writer's notes are for the person editing the draft, never part of the post: the editor shows them once.
      if (data.generation) sessionStorage.setItem(`writer-notes:${data.post.id}`, JSON.stringify(data.generation));
      ctx.flash(data.generation ? `Written by ${data.generation.provider === 'ollama' ? `Ollama (${data.generation.model})` : 'the built-in writer (no model)'}.` : 'Written.');
      ctx.navigate(`/admin/posts/${encodeURIComponent(data.post.id)}`);
    } catch (error) {
      message.error(error);
    } finally {
      working.hidden = true;
    }
  });
  main.append(heading('Generate'), h('p', {}, 'Write a draft post with the configured generator. It opens in the editor when done.'), form);
}
