// The comment form with JavaScript: "Reply" fills in the parent without reloading, and the
// form is sent in place to the content API (the same checks as the form without script).
const form = document.getElementById('comment-form');

if (form) {
  const parent = form.querySelector('input[name="parentId"]');
  const status = document.createElement('p');
  status.className = 'comment-notice';
  status.setAttribute('role', 'status');
  form.prepend(status);

  for (const link of document.querySelectorAll('a[data-reply-to]')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      parent.value = link.dataset.replyTo;
      status.textContent = `Replying to ${link.dataset.replyName}`;
      form.querySelector('textarea').focus();
    });
  }

  const showProblems = (details) => {
    for (const old of form.querySelectorAll('.field-error.live')) old.remove();
    for (const { path, message } of details ?? []) {
      const field = form.querySelector(`[name="${path.replace('/body/', '')}"]`);
      if (!field || field.type === 'hidden') continue;
      field.setAttribute('aria-invalid', 'true');
      const note = document.createElement('span');
      note.className = 'field-error live';
      note.textContent = message;
      field.after(note);
    }
  };

  /** The widget's answer: solved now when the reader was quicker than the proof of work (or it never started). */
  const proof = async (data) => {
    const widget = form.querySelector('altcha-widget');
    if (data.altcha || !widget || typeof widget.verify !== 'function') return data.altcha;
    status.textContent = 'Checking…';
    const solved = await Promise.race([widget.verify().catch(() => null), new Promise((resolve) => setTimeout(resolve, 30_000, null))]);
    return solved?.payload ?? '';
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      // Without an answer the comment is sent all the same: it waits for a moderator.
      const altcha = await proof(data);
      if (altcha) data.altcha = altcha;
      else delete data.altcha;
      const answer = await fetch(form.dataset.api, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(data) });
      const json = await answer.json();
      if (answer.status === 201) {
        status.textContent = json.data.comment.status === 'approved' ? 'Thanks: your comment is published' : 'Thanks: your comment waits for a moderator';
        form.querySelector('textarea').value = '';
        parent.value = '';
        showProblems([]);
        if (json.data.comment.status === 'approved') location.reload();
      } else {
        status.textContent = json.error?.message ?? 'Your comment could not be sent.';
        showProblems(json.error?.details);
      }
    } catch {
      status.textContent = 'Your comment could not be sent: check your connection and try again.';
    } finally {
      button.disabled = false;
      // A challenge is good once: the next send needs a new one.
      form.querySelector('altcha-widget')?.reset?.();
    }
  });
}
