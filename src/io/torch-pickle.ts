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

/** The pickle machine's state: the input, its read position, the stack, the marks and the memo. */
class Machine {
  p: number;
  readonly stack: unknown[] = [];
  readonly marks: number[] = [];
  readonly memo = new Map<number, unknown>();
  private readonly dv: DataView;
  private readonly what: string;

  constructor(
    readonly buf: Uint8Array,
    readonly opts: UnpickleOptions,
    offset: number,
  ) {
    this.p = offset;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.what = opts.what ?? 'pickle';
  }
  fail(m: string): never {
    throw new UnpickleError(`${this.what}: ${m} (at byte ${this.p})`);
  }
  need(n: number): void {
    if (n < 0 || this.p + n > this.buf.length) this.fail('unexpected end of data (truncated file?)');
  }
  private fixed(n: number, get: (at: number) => number): number {
    this.need(n);
    const v = get(this.p);
    this.p += n;
    return v;
  }
  u8(): number {
    return this.fixed(1, (at) => this.buf[at]!);
  }
  u16(): number {
    return this.fixed(2, (at) => this.dv.getUint16(at, true));
  }
  u32(): number {
    return this.fixed(4, (at) => this.dv.getUint32(at, true));
  }
  i32(): number {
    return this.fixed(4, (at) => this.dv.getInt32(at, true));
  }
  f64(): number {
    return this.fixed(8, (at) => this.dv.getFloat64(at, false));
  }
  u64(): number {
    this.need(8);
    const v = this.dv.getBigUint64(this.p, true);
    this.p += 8;
    if (v > BigInt(this.buf.length)) this.fail('length beyond the end of the data');
    return Number(v);
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const b = this.buf.subarray(this.p, this.p + n);
    this.p += n;
    return b;
  }
  str(n: number): string {
    const b = this.bytes(n);
    try {
      return utf8.decode(b);
    } catch {
      return this.fail('invalid UTF-8 in a string');
    }
  }
  /** A protocol-0 text field, up to its newline. */
  line(): string {
    const e = this.buf.indexOf(0x0a, this.p);
    if (e < 0) this.fail('unexpected end of data in a text field');
    const s = latin1(this.buf.subarray(this.p, e));
    this.p = e + 1;
    return s;
  }
  /** A protocol-0 decimal integer (number, bigint beyond 2^53). */
  intLine(s: string, op: string): number | bigint {
    if (!/^[-+]?\d+$/.test(s)) this.fail(`bad ${op}`);
    const b = BigInt(s);
    return Number.isSafeInteger(Number(b)) ? Number(b) : b;
  }
  push(v: unknown): void {
    this.stack.push(v);
  }
  top(): unknown {
    const { stack, marks } = this;
    if (stack.length === 0 || (marks.length && stack.length <= marks[marks.length - 1]!)) this.fail('stack underflow');
    return stack[stack.length - 1];
  }
  pop(): unknown {
    this.top();
    return this.stack.pop();
  }
  /** The top n values, deepest first. */
  popN(n: number): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.unshift(this.pop());
    return out;
  }
  popMark(): unknown[] {
    if (!this.marks.length) this.fail('no MARK on the stack');
    return this.stack.splice(this.marks.pop()!);
  }
  resolve(module: string, name: string): unknown {
    const key = `${module}.${name}`;
    const g = this.opts.globals.get(key);
    if (!g) this.fail(`refusing to load the Python global ${key}: not on the allow-list of this reader, which executes no code`);
    return g.value ?? new Callable(key, g);
  }
  call(f: unknown, args: unknown, how: string): unknown {
    if (!(f instanceof Callable) || !f.g.call) this.fail(`${how} of something that is not an allowed callable (${describe(f)})`);
    if (!Array.isArray(args)) this.fail(`${how} arguments are not a tuple`);
    try {
      return f.g.call(args);
    } catch (e) {
      if (e instanceof UnpickleError) throw e;
      return this.fail(`${f.key}: ${(e as Error).message}`);
    }
  }
  setItem(d: unknown, k: unknown, v: unknown): void {
    if (d instanceof Map) d.set(k, v);
    else if (d instanceof PyObject && typeof k === 'string') d.attrs.set(k, v);
    else this.fail(`SETITEM on ${describe(d)}`);
  }
  persistent(pid: unknown): unknown {
    if (!this.opts.persistentLoad) this.fail('persistent id without a persistent loader');
    return this.opts.persistentLoad(pid);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function latin1(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 4096) s += String.fromCharCode(...b.subarray(i, i + 4096));
  return s;
}

/** BUILD: obj.__setstate__(state) or obj.__dict__.update(state). */
function build(m: Machine): void {
  const state = m.pop();
  const obj = m.top();
  if (obj instanceof Map || obj instanceof TorchTensorMarker) return; // a dict subclass's instance attributes (e.g. a state dict's _metadata): not items; tensors: Python attributes (usually empty); both dropped
  if (!(obj instanceof PyObject)) m.fail(`BUILD of ${describe(obj)}`);
  let attrs = state;
  if (Array.isArray(state) && state.length === 2) attrs = state[0]; // (dict, slots)
  if (attrs === null) return;
  if (!(attrs instanceof Map)) m.fail(`BUILD of ${describe(obj)} with a ${describe(state)} state`);
  for (const [k, v] of attrs) {
    if (typeof k !== 'string') m.fail('attribute name is not a string');
    obj.attrs.set(k, v);
  }
}

function dict(m: Machine, what: string): Map<unknown, unknown> {
  const items = m.popMark();
  if (items.length % 2) m.fail(`${what} with an odd number of items`);
  const d = new Map();
  for (let i = 0; i < items.length; i += 2) d.set(items[i], items[i + 1]);
  return d;
}

function appendTo(m: Machine, items: unknown[], what: string): void {
  const l = m.top();
  if (!Array.isArray(l)) m.fail(`${what} to ${describe(l)}`);
  for (const v of items) l.push(v);
}

function memoGet(m: Machine, k: number): void {
  if (!m.memo.has(k)) m.fail(`memo key ${k} is not defined`);
  m.push(m.memo.get(k));
}

/** A length field, checked not negative. */
function length(m: Machine, n: number, what: string): number {
  if (n < 0) m.fail(`negative ${what} length`);
  return n;
}

function float(m: Machine): number {
  const s = m.line();
  const v = Number(s);
  if (Number.isNaN(v) && !/nan/i.test(s)) m.fail('bad FLOAT');
  return v;
}

function proto(m: Machine): void {
  const v = m.u8();
  if (v > 5) m.fail(`unsupported pickle protocol ${v}`);
}

/** INT: protocol 0's decimal integer, or True/False as 01/00. */
function intOrBool(m: Machine, s: string): unknown {
  return s === '01' ? true : s === '00' ? false : m.intLine(s, 'INT');
}

function setItem(m: Machine): void {
  const [k, v] = m.popN(2);
  m.setItem(m.top(), k, v);
}

function setItems(m: Machine): void {
  const items = m.popMark();
  if (items.length % 2) m.fail('SETITEMS with an odd number of items');
  const d = m.top();
  for (let i = 0; i < items.length; i += 2) m.setItem(d, items[i], items[i + 1]);
}

function addItems(m: Machine): void {
  const items = m.popMark();
  const s = m.top();
  if (!(s instanceof Set)) m.fail(`ADDITEMS to ${describe(s)}`);
  for (const v of items) s.add(v);
}

function put(m: Machine): void {
  const s = m.line();
  if (!/^\d+$/.test(s)) m.fail('bad PUT');
  m.memo.set(Number(s), m.top());
}

function stackGlobal(m: Machine): unknown {
  const [module, name] = m.popN(2);
  if (typeof module !== 'string' || typeof name !== 'string') m.fail('STACK_GLOBAL needs two strings');
  return m.resolve(module, name);
}

function newObjEx(m: Machine): unknown {
  const [cls, args, kwargs] = m.popN(3);
  if (!(kwargs instanceof Map) || kwargs.size) m.fail('NEWOBJ_EX with keyword arguments');
  return m.call(cls, args, 'NEWOBJ_EX');
}

function binPersId(m: Machine): unknown {
  const pid = m.pop();
  try {
    return m.persistent(pid);
  } catch (e) {
    if (e instanceof UnpickleError) throw e;
    return m.fail((e as Error).message);
  }
}

/** One handler an opcode (Lib/pickletools.py's names); STOP is the loop's own. */
const OPS = new Map<number, (m: Machine) => void>([
  [0x80, proto], // PROTO
  [0x95, (m) => void m.u64()], // FRAME (frames are only a hint for buffering)
  [0x28, (m) => void m.marks.push(m.stack.length)], // MARK
  [0x30, (m) => void m.pop()], // POP
  [0x31, (m) => void m.popMark()], // POP_MARK
  [0x32, (m) => m.push(m.top())], // DUP
  [0x4e, (m) => m.push(null)], // NONE
  [0x88, (m) => m.push(true)], // NEWTRUE
  [0x89, (m) => m.push(false)], // NEWFALSE
  [0x4a, (m) => m.push(m.i32())], // BININT
  [0x4b, (m) => m.push(m.u8())], // BININT1
  [0x4d, (m) => m.push(m.u16())], // BININT2
  [0x8a, (m) => m.push(decodeLong(m.bytes(m.u8())))], // LONG1
  [0x8b, (m) => m.push(decodeLong(m.bytes(length(m, m.i32(), 'LONG4'))))], // LONG4
  [0x47, (m) => m.push(m.f64())], // BINFLOAT (big-endian)
  [0x49, (m) => m.push(intOrBool(m, m.line()))], // INT (protocol 0; also True/False as 01/00)
  [0x4c, (m) => m.push(m.intLine(m.line().replace(/L$/, ''), 'LONG'))], // LONG
  [0x46, (m) => m.push(float(m))], // FLOAT
  [0x58, (m) => m.push(m.str(m.u32()))], // BINUNICODE
  [0x8c, (m) => m.push(m.str(m.u8()))], // SHORT_BINUNICODE
  [0x8d, (m) => m.push(m.str(m.u64()))], // BINUNICODE8
  [0x54, (m) => m.push(latin1(m.bytes(length(m, m.i32(), 'BINSTRING'))))], // BINSTRING (py2 str)
  [0x55, (m) => m.push(latin1(m.bytes(m.u8())))], // SHORT_BINSTRING
  [0x42, (m) => m.push(new Uint8Array(m.bytes(m.u32())))], // BINBYTES
  [0x43, (m) => m.push(new Uint8Array(m.bytes(m.u8())))], // SHORT_BINBYTES
  [0x8e, (m) => m.push(new Uint8Array(m.bytes(m.u64())))], // BINBYTES8
  [0x96, (m) => m.push(new Uint8Array(m.bytes(m.u64())))], // BYTEARRAY8
  [0x5d, (m) => m.push([])], // EMPTY_LIST
  [0x29, (m) => m.push([])], // EMPTY_TUPLE
  [0x7d, (m) => m.push(new Map())], // EMPTY_DICT
  [0x8f, (m) => m.push(new Set())], // EMPTY_SET
  [0x6c, (m) => m.push(m.popMark())], // LIST
  [0x74, (m) => m.push(m.popMark())], // TUPLE
  [0x85, (m) => m.push(m.popN(1))], // TUPLE1
  [0x86, (m) => m.push(m.popN(2))], // TUPLE2
  [0x87, (m) => m.push(m.popN(3))], // TUPLE3
  [0x64, (m) => m.push(dict(m, 'DICT'))], // DICT
  [0x91, (m) => m.push(new Set(m.popMark()))], // FROZENSET
  [0x61, (m) => appendTo(m, m.popN(1), 'APPEND')], // APPEND
  [0x65, (m) => appendTo(m, m.popMark(), 'APPENDS')], // APPENDS
  [0x73, setItem], // SETITEM
  [0x75, setItems], // SETITEMS
  [0x90, addItems], // ADDITEMS
  [0x71, (m) => void m.memo.set(m.u8(), m.top())], // BINPUT
  [0x72, (m) => void m.memo.set(m.u32(), m.top())], // LONG_BINPUT
  [0x94, (m) => void m.memo.set(m.memo.size, m.top())], // MEMOIZE
  [0x70, put], // PUT
  [0x68, (m) => memoGet(m, m.u8())], // BINGET
  [0x6a, (m) => memoGet(m, m.u32())], // LONG_BINGET
  [0x67, (m) => memoGet(m, Number(m.line()))], // GET
  [0x63, (m) => m.push(m.resolve(m.line(), m.line()))], // GLOBAL (module, then name)
  [0x93, (m) => m.push(stackGlobal(m))], // STACK_GLOBAL
  [0x52, (m) => m.push(m.call(...(m.popN(2) as [unknown, unknown]), 'REDUCE'))], // REDUCE
  [0x81, (m) => m.push(m.call(...(m.popN(2) as [unknown, unknown]), 'NEWOBJ'))], // NEWOBJ
  [0x92, (m) => m.push(newObjEx(m))], // NEWOBJ_EX
  [0x62, build], // BUILD
  [0x51, (m) => m.push(binPersId(m))], // BINPERSID
  [0x50, (m) => m.push(m.persistent(m.line()))], // PERSID
]);

/**
 * Unpickles one pickle starting at `offset`; returns the value and the offset after its STOP
 * opcode (files such as PyTorch's legacy format hold several pickles in a row).
 */
export function unpickle(buf: Uint8Array, opts: UnpickleOptions, offset = 0): { value: unknown; end: number } {
  const m = new Machine(buf, opts, offset);
  for (;;) {
    const op = m.u8();
    if (op === 0x2e) {
      // STOP
      if (m.stack.length !== 1 || m.marks.length) m.fail('malformed pickle (stack not a single value at STOP)');
      return { value: m.stack[0], end: m.p };
    }
    const handler = OPS.get(op) ?? m.fail(`unsupported or invalid opcode 0x${op.toString(16).padStart(2, '0')}`);
    handler(m);
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
