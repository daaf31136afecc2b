// Per-isolate state: the one memo every cache built from a long-lived object (the env, a settings object, a binding)
// uses, so that such state lives in one kind of place and dies with the object it was built from.

/** Values memoised per key object and per memo: one WeakMap for the isolate, keyed first by the object. */
const memos = new WeakMap<object, Map<symbol, unknown>>();

/**
 * A function that builds its value once per key object and then answers the same value for that object, for as long
 * as the object lives (the runtime hands every request of an isolate the same env object). `name` only labels the memo.
 */
export function perIsolate<K extends object, V>(name: string, build: (key: K) => V): (key: K) => V {
  const slot = Symbol(name);
  return (key: K): V => {
    let values = memos.get(key);
    if (!values) memos.set(key, (values = new Map()));
    if (values.has(slot)) return values.get(slot) as V;
    const value = build(key);
    values.set(slot, value);
    return value;
  };
}
