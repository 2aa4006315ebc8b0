/** A subscriber's state: confirmed (`active`) addresses alone receive posts. */
export const SUBSCRIBER_STATUSES = ['pending', 'active', 'unsubscribed', 'bouncing'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

/** Where a subscriber's consent came from: the public form, the content API, or staff's import. */
export const SUBSCRIBER_SOURCES = ['form', 'api', 'import'] as const;
export type SubscriberSource = (typeof SUBSCRIBER_SOURCES)[number];

export const NEWSLETTER_SEND_STATUSES = ['sending', 'sent'] as const;
export type NewsletterSendStatus = (typeof NEWSLETTER_SEND_STATUSES)[number];

export const NEWSLETTER_RECIPIENT_STATUSES = ['pending', 'sending', 'sent', 'failed', 'bounced'] as const;
export type NewsletterRecipientStatus = (typeof NEWSLETTER_RECIPIENT_STATUSES)[number];
