// A restricted unpickler (Python pickle protocols 2–5, the binary opcodes of Lib/pickletools.py)
// for reading files written by Python — PyTorch checkpoints above all. It executes nothing: a
// GLOBAL / STACK_GLOBAL names a Python object, and only names on an allow-list resolve, each to a
// TypeScript function that builds plain data (tensor rebuild functions, storage types,
// OrderedDict, argparse.Namespace, …). Any other global is an Error naming it. Every length,
// memo index and stack access is checked, so a truncated or corrupt pickle is an Error too.
//
// Python values map to JavaScript as:
//   None → null; bool → boolean; int → number (bigint beyond 2^53); float → number; str → string;
//   bytes/bytearray → Uint8Array; list, tuple → Array; dict, OrderedDict → Map (keys as above);
//   set/frozenset → Set; argparse.Namespace → PyObject; allowed globals used as values (e.g. a
//   storage type) → PyGlobal; persistent ids → whatever the caller's persistentLoad returns.

/** A Python global named in the pickle (module + name), allowed but used as a plain value. */
export class PyGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualified(): string {
    return `${this.module}.${this.name}`;
  }
}

/** An instance of an allowed Python class (argparse.Namespace): its attributes. */
export class PyObject {
  constructor(
    readonly className: string,
    readonly attrs: Map<string, unknown> = new Map(),
  ) {}
  get(name: string): unknown {
    return this.attrs.get(name);
  }
}

/** What a global resolves to: a function called by REDUCE/NEWOBJ, optionally a BUILD handler. */
export interface AllowedGlobal {
  /** REDUCE (callable(*args)) and NEWOBJ (cls.__new__(cls, *args)). */
  call?(args: unknown[]): unknown;
  /** A value standing for the global itself (default: a PyGlobal). */
  value?: unknown;
}

export interface UnpickleOptions {
  /** The allowed globals, keyed "module.name". */
  globals: ReadonlyMap<string, AllowedGlobal>;
  /** BINPERSID: turns a persistent id (already unpickled) into a value. */
  persistentLoad?(pid: unknown): unknown;
  /** Names the input in errors. */
  what?: string;
}

/** Errors of the unpickler carry the input's name and the byte offset. */
export class UnpickleError extends Error {}

/**
 * Unpickles one pickle starting at `offset`; returns the value and the offset after its STOP
 * opcode (files such as PyTorch's legacy format hold several pickles in a row).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the pickle machine: one loop over one opcode switch
export function unpickle(buf: Uint8Array, opts: UnpickleOptions, offset = 0): { value: unknown; end: number } {
  const what = opts.what ?? 'pickle';
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let p = offset;
  const stack: unknown[] = [];
  const marks: number[] = [];
  const memo = new Map<number, unknown>();
  const fail = (m: string): never => {
    throw new UnpickleError(`${what}: ${m} (at byte ${p})`);
  };
  const need = (n: number) => {
    if (n < 0 || p + n > buf.length) fail('unexpected end of data (truncated file?)');
  };
  const u8 = () => {
    need(1);
    return buf[p++]!;
  };
  const u16 = () => {
    need(2);
    const v = dv.getUint16(p, true);
    p += 2;
    return v;
  };
  const u32 = () => {
    need(4);
    const v = dv.getUint32(p, true);
    p += 4;
    return v;
  };
  const i32 = () => {
    need(4);
    const v = dv.getInt32(p, true);
    p += 4;
    return v;
  };
  const u64 = () => {
    need(8);
    const v = dv.getBigUint64(p, true);
    p += 8;
    if (v > BigInt(buf.length)) fail('length beyond the end of the data');
    return Number(v);
  };
  const bytes = (n: number) => {
    need(n);
    const b = buf.subarray(p, p + n);
    p += n;
    return b;
  };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const str = (n: number) => {
    const b = bytes(n);
    try {
      return utf8.decode(b);
    } catch {
      return fail('invalid UTF-8 in a string');
    }
  };
  const latin1 = (b: Uint8Array) => {
    let s = '';
    for (let i = 0; i < b.length; i += 4096) s += String.fromCharCode(...b.subarray(i, i + 4096));
    return s;
  };
  const pop = (): unknown => {
    if (stack.length === 0 || (marks.length && stack.length <= marks[marks.length - 1]!)) fail('stack underflow');
    return stack.pop();
  };
  const top = (): unknown => {
    if (stack.length === 0 || (marks.length && stack.length <= marks[marks.length - 1]!)) fail('stack underflow');
    return stack[stack.length - 1];
  };
  const popMark = (): unknown[] => {
    if (!marks.length) fail('no MARK on the stack');
    const m = marks.pop()!;
    return stack.splice(m);
  };
  const line = (): string => {
    const e = buf.indexOf(0x0a, p);
    if (e < 0) fail('unexpected end of data in a text field');
    const s = latin1(buf.subarray(p, e));
    p = e + 1;
    return s;
  };
  const resolve = (module: string, name: string): unknown => {
    const key = `${module}.${name}`;
    const g = opts.globals.get(key);
    if (!g) fail(`refusing to load the Python global ${key}: not on the allow-list of this reader, which executes no code`);
    return g!.value ?? new Callable(key, g!);
  };
  const call = (f: unknown, args: unknown, how: string): unknown => {
    if (!(f instanceof Callable) || !f.g.call) fail(`${how} of something that is not an allowed callable (${describe(f)})`);
    if (!Array.isArray(args)) fail(`${how} arguments are not a tuple`);
    try {
      return (f as Callable).g.call!(args as unknown[]);
    } catch (e) {
      if (e instanceof UnpickleError) throw e;
      return fail(`${(f as Callable).key}: ${(e as Error).message}`);
    }
  };
  const setItem = (d: unknown, k: unknown, v: unknown) => {
    if (d instanceof Map) d.set(k, v);
    else if (d instanceof PyObject && typeof k === 'string') d.attrs.set(k, v);
    else fail(`SETITEM on ${describe(d)}`);
  };

  for (;;) {
    const op = u8();
    switch (op) {
      case 0x80: {
        const v = u8();
        if (v > 5) fail(`unsupported pickle protocol ${v}`);
        break;
      } // PROTO
      case 0x95:
        u64();
        break; // FRAME (frames are only a hint for buffering)
      case 0x2e: {
        // STOP
        if (stack.length !== 1 || marks.length) fail('malformed pickle (stack not a single value at STOP)');
        return { value: stack[0], end: p };
      }
      case 0x28:
        marks.push(stack.length);
        break; // MARK
      case 0x30:
        pop();
        break; // POP
      case 0x31:
        popMark();
        break; // POP_MARK
      case 0x32:
        stack.push(top());
        break; // DUP
      case 0x4e:
        stack.push(null);
        break; // NONE
      case 0x88:
        stack.push(true);
        break; // NEWTRUE
      case 0x89:
        stack.push(false);
        break; // NEWFALSE
      case 0x4a:
        stack.push(i32());
        break; // BININT
      case 0x4b:
        stack.push(u8());
        break; // BININT1
      case 0x4d:
        stack.push(u16());
        break; // BININT2
      case 0x8a:
        stack.push(decodeLong(bytes(u8())));
        break; // LONG1
      case 0x8b: {
        const n = i32();
        if (n < 0) fail('negative LONG4 length');
        stack.push(decodeLong(bytes(n)));
        break;
      } // LONG4
      case 0x47: {
        need(8);
        const v = dv.getFloat64(p, false);
        p += 8;
        stack.push(v);
        break;
      } // BINFLOAT (big-endian)
      case 0x49: {
        // INT (protocol 0; also True/False as 01/00)
        const s = line();
        if (s === '01') stack.push(true);
        else if (s === '00') stack.push(false);
        else {
          if (!/^[-+]?\d+$/.test(s)) fail('bad INT');
          const b = BigInt(s);
          stack.push(Number.isSafeInteger(Number(b)) ? Number(b) : b);
        }
        break;
      }
      case 0x4c: {
        const s = line().replace(/L$/, '');
        if (!/^[-+]?\d+$/.test(s)) fail('bad LONG');
        const b = BigInt(s);
        stack.push(Number.isSafeInteger(Number(b)) ? Number(b) : b);
        break;
      } // LONG
      case 0x46: {
        const s = line();
        const v = Number(s);
        if (Number.isNaN(v) && !/nan/i.test(s)) fail('bad FLOAT');
        stack.push(v);
        break;
      } // FLOAT
      case 0x58:
        stack.push(str(u32()));
        break; // BINUNICODE
      case 0x8c:
        stack.push(str(u8()));
        break; // SHORT_BINUNICODE
      case 0x8d:
        stack.push(str(u64()));
        break; // BINUNICODE8
      case 0x54: {
        const n = i32();
        if (n < 0) fail('negative BINSTRING length');
        stack.push(latin1(bytes(n)));
        break;
      } // BINSTRING (py2 str)
      case 0x55:
        stack.push(latin1(bytes(u8())));
        break; // SHORT_BINSTRING
      case 0x42:
        stack.push(new Uint8Array(bytes(u32())));
        break; // BINBYTES
      case 0x43:
        stack.push(new Uint8Array(bytes(u8())));
        break; // SHORT_BINBYTES
      case 0x8e:
        stack.push(new Uint8Array(bytes(u64())));
        break; // BINBYTES8
      case 0x96:
        stack.push(new Uint8Array(bytes(u64())));
        break; // BYTEARRAY8
      case 0x5d:
        stack.push([]);
        break; // EMPTY_LIST
      case 0x29:
        stack.push([]);
        break; // EMPTY_TUPLE
      case 0x7d:
        stack.push(new Map());
        break; // EMPTY_DICT
      case 0x8f:
        stack.push(new Set());
        break; // EMPTY_SET
      case 0x6c:
        stack.push(popMark());
        break; // LIST
      case 0x74:
        stack.push(popMark());
        break; // TUPLE
      case 0x85:
        stack.push([pop()]);
        break; // TUPLE1
      case 0x86: {
        const b = pop(),
          a = pop();
        stack.push([a, b]);
        break;
      } // TUPLE2
      case 0x87: {
        const c = pop(),
          b = pop(),
          a = pop();
        stack.push([a, b, c]);
        break;
      } // TUPLE3
      case 0x64: {
        // DICT
        const items = popMark();
        if (items.length % 2) fail('DICT with an odd number of items');
        const d = new Map();
        for (let i = 0; i < items.length; i += 2) d.set(items[i], items[i + 1]);
        stack.push(d);
        break;
      }
      case 0x91:
        stack.push(new Set(popMark()));
        break; // FROZENSET
      case 0x61: {
        const v = pop();
        const l = top();
        if (!Array.isArray(l)) fail(`APPEND to ${describe(l)}`);
        (l as unknown[]).push(v);
        break;
      } // APPEND
      case 0x65: {
        const items = popMark();
        const l = top();
        if (!Array.isArray(l)) fail(`APPENDS to ${describe(l)}`);
        for (const v of items) (l as unknown[]).push(v);
        break;
      } // APPENDS
      case 0x73: {
        const v = pop(),
          k = pop();
        setItem(top(), k, v);
        break;
      } // SETITEM
      case 0x75: {
        // SETITEMS
        const items = popMark();
        if (items.length % 2) fail('SETITEMS with an odd number of items');
        const d = top();
        for (let i = 0; i < items.length; i += 2) setItem(d, items[i], items[i + 1]);
        break;
      }
      case 0x90: {
        const items = popMark();
        const s = top();
        if (!(s instanceof Set)) fail(`ADDITEMS to ${describe(s)}`);
        for (const v of items) (s as Set<unknown>).add(v);
        break;
      } // ADDITEMS
      case 0x71:
        memo.set(u8(), top());
        break; // BINPUT
      case 0x72:
        memo.set(u32(), top());
        break; // LONG_BINPUT
      case 0x94:
        memo.set(memo.size, top());
        break; // MEMOIZE
      case 0x70: {
        const s = line();
        if (!/^\d+$/.test(s)) fail('bad PUT');
        memo.set(Number(s), top());
        break;
      } // PUT
      case 0x68:
      case 0x6a:
      case 0x67: {
        // BINGET, LONG_BINGET, GET
        const k = op === 0x68 ? u8() : op === 0x6a ? u32() : Number(line());
        if (!memo.has(k)) fail(`memo key ${k} is not defined`);
        stack.push(memo.get(k));
        break;
      }
      case 0x63: {
        const module = line(),
          name = line();
        stack.push(resolve(module, name));
        break;
      } // GLOBAL
      case 0x93: {
        // STACK_GLOBAL
        const name = pop(),
          module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') fail('STACK_GLOBAL needs two strings');
        stack.push(resolve(module as string, name as string));
        break;
      }
      case 0x52: {
        const args = pop();
        const f = pop();
        stack.push(call(f, args, 'REDUCE'));
        break;
      } // REDUCE
      case 0x81: {
        const args = pop();
        const cls = pop();
        stack.push(call(cls, args, 'NEWOBJ'));
        break;
      } // NEWOBJ
      case 0x92: {
        // NEWOBJ_EX
        const kwargs = pop(),
          args = pop(),
          cls = pop();
        if (!(kwargs instanceof Map) || kwargs.size) fail('NEWOBJ_EX with keyword arguments');
        stack.push(call(cls, args, 'NEWOBJ_EX'));
        break;
      }
      case 0x62: {
        // BUILD: obj.__setstate__(state) or obj.__dict__.update(state)
        const state = pop();
        const obj = top();
        if (obj instanceof Map) {
          // a dict subclass's instance attributes (e.g. a state dict's _metadata): not items; dropped
        } else if (obj instanceof PyObject) {
          let attrs = state;
          if (Array.isArray(state) && state.length === 2) attrs = state[0]; // (dict, slots)
          if (attrs === null) break;
          if (!(attrs instanceof Map)) fail(`BUILD of ${describe(obj)} with a ${describe(state)} state`);
          for (const [k, v] of attrs as Map<unknown, unknown>) {
            if (typeof k !== 'string') fail('attribute name is not a string');
            obj.attrs.set(k as string, v);
          }
        } else if (obj instanceof TorchTensorMarker) {
          // tensors: BUILD sets Python attributes (state is usually empty); ignored
        } else fail(`BUILD of ${describe(obj)}`);
        break;
      }
      case 0x51: {
        // BINPERSID
        const pid = pop();
        if (!opts.persistentLoad) fail('persistent id without a persistent loader');
        try {
          stack.push(opts.persistentLoad!(pid));
        } catch (e) {
          if (e instanceof UnpickleError) throw e;
          fail((e as Error).message);
        }
        break;
      }
      case 0x50: {
        const pid = line();
        if (!opts.persistentLoad) fail('persistent id without a persistent loader');
        stack.push(opts.persistentLoad!(pid));
        break;
      } // PERSID
      default:
        fail(`unsupported or invalid opcode 0x${op.toString(16).padStart(2, '0')}`);
    }
  }
}

/** Marker base class for values that accept (and ignore) BUILD, such as tensors. */
export class TorchTensorMarker {}

class Callable {
  constructor(
    readonly key: string,
    readonly g: AllowedGlobal,
  ) {}
}

function describe(v: unknown): string {
  if (v === null) return 'None';
  if (v instanceof Callable) return v.key;
  if (v instanceof Map) return 'a dict';
  if (Array.isArray(v)) return 'a list/tuple';
  if (v instanceof PyObject) return v.className;
  if (v instanceof PyGlobal) return v.qualified;
  return typeof v;
}

/** Little-endian two's-complement bytes → number (bigint when beyond 2^53). */
function decodeLong(b: Uint8Array): number | bigint {
  if (b.length === 0) return 0;
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
  if (b[b.length - 1]! & 0x80) v -= 1n << BigInt(8 * b.length);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Allowed globals that build plain containers: OrderedDict, argparse.Namespace, builtins. */
export function containerGlobals(): Map<string, AllowedGlobal> {
  const m = new Map<string, AllowedGlobal>();
  const dict: AllowedGlobal = {
    call(args) {
      const d = new Map();
      if (args.length && args[0] instanceof Map) for (const [k, v] of args[0]) d.set(k, v);
      else if (args.length && Array.isArray(args[0]))
        for (const kv of args[0]) {
          if (!Array.isArray(kv) || kv.length !== 2) throw new Error('items must be pairs');
          d.set(kv[0], kv[1]);
        }
      return d;
    },
  };
  m.set('collections.OrderedDict', dict);
  m.set('builtins.dict', dict);
  m.set('__builtin__.dict', dict);
  m.set('argparse.Namespace', { call: () => new PyObject('argparse.Namespace') });
  const set: AllowedGlobal = { call: (args) => new Set(Array.isArray(args[0]) ? args[0] : args[0] instanceof Set ? args[0] : []) };
  m.set('builtins.set', set);
  m.set('builtins.frozenset', set);
  m.set('__builtin__.set', set);
  // Python 3 pickles bytes at protocol 2 as _codecs.encode(text, 'latin1'): a pure transform
  m.set('_codecs.encode', {
    call(args) {
      const [s, enc] = args;
      if (typeof s !== 'string') throw new Error('expects a string');
      if (enc !== 'latin1' && enc !== 'latin-1') throw new Error(`only latin1 is supported, not ${String(enc)}`);
      const out = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 0xff) throw new Error('a character outside latin1');
        out[i] = c;
      }
      return out;
    },
  });
  return m;
}
