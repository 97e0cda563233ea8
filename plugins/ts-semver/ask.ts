// Typed questions to the user: a form (form-mode elicitation, through the
// contract's `client.ask`) whose answer's type follows from its schema.
//
//   const answer = elicit('part', 'Which part?', {
//     properties: { part: { type: 'string', enum: ['major', 'minor'] } },
//     required: ['part'],
//   });
//   // answer: { part: 'major' | 'minor' } | undefined (declined, cancelled)
//
// The types of `ask` and its requests and answers come from the contract
// (`jco guest-types`, generated from wit/ at build time); what is added here
// is the mapping from a form's schema to its answer's type. Corral checks
// every answer against the schema before the plugin sees it, so the cast
// below only states what the host guarantees.

import { ask, capabilities } from 'corral:plugin/client@0.3.0';
import type { AskError } from 'corral:plugin/client@0.3.0';

interface Described {
  title?: string;
  description?: string;
}

/** One field of a form, as the contract's forms allow. */
export type Field =
  | (Described & { type: 'string'; enum?: readonly string[]; default?: string; minLength?: number; maxLength?: number })
  | (Described & { type: 'boolean'; default?: boolean })
  | (Described & { type: 'number' | 'integer'; minimum?: number; maximum?: number; default?: number });

/** The value a user gives for field F. */
export type Value<F extends Field> = F extends { enum: readonly (infer E)[] }
  ? E
  : F extends { type: 'string' }
    ? string
    : F extends { type: 'boolean' }
      ? boolean
      : number;

/** The answer to a form: its required fields, and the others if given. */
export type Answer<P extends Record<string, Field>, R extends keyof P> = { [K in R]: Value<P[K]> } & {
  [K in Exclude<keyof P, R>]?: Value<P[K]>;
};

/** Asking failed: the message says why, for the model. */
export class AskFailed extends Error {}

/** Whether this call's client can show the user a form. */
export function canElicit(): boolean {
  return capabilities().elicitationForm;
}

/** Asks the user to fill in a form, under `key` (clients of 2026-07-28 see
 * it in `inputRequests`: keep it fixed). The fields, or undefined when the
 * user declined or dismissed the form. */
export function elicit<const P extends Record<string, Field>, const R extends keyof P & string = never>(
  key: string,
  message: string,
  form: { properties: P; required?: readonly R[] },
): Answer<P, R> | undefined {
  const requestedSchema = JSON.stringify({ type: 'object', properties: form.properties, required: form.required ?? [] });
  let answers;
  try {
    answers = ask([{ key, request: { tag: 'elicit-form', val: { message, requestedSchema } } }]);
  } catch (err) {
    throw new AskFailed(describe(err));
  }
  const [answer] = answers;
  if (answer?.tag !== 'elicitation') {
    throw new AskFailed('the client answered a form with another kind of answer');
  }
  return answer.val.tag === 'accept' ? (JSON.parse(answer.val.val) as Answer<P, R>) : undefined;
}

/** What went wrong, from the error `ask` throws: its `payload` is the
 * contract's `ask-error`. */
function describe(err: unknown): string {
  const payload = (err as { payload?: AskError } | null)?.payload;
  switch (payload?.tag) {
    case 'undeclared':
      return `the client cannot be asked: it did not declare the \`${payload.val}\` capability`;
    case 'failed':
      return `the client's answer failed: ${payload.val}`;
    case 'timed-out':
      return 'the user did not answer in time';
    case 'invalid':
      return `invalid question to the client: ${payload.val}`;
    default:
      throw err;
  }
}
