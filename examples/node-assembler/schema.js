'use strict';
// A JSON Schema (draft 2020-12) validator for tool arguments, covering the keywords tool
// schemas use: type, enum, const, the object, array, string and number assertions, the
// applicators (allOf, anyOf, oneOf, not, if/then/else, $ref to a local JSON pointer). `format`
// is an annotation, as in the 2020-12 default. Keywords it cannot evaluate
// (unevaluatedProperties, unevaluatedItems, dependentSchemas, $dynamicRef) are reported as
// violations rather than ignored: a call this validator cannot check is never released.

const UNSUPPORTED = ['unevaluatedProperties', 'unevaluatedItems', 'dependentSchemas', '$dynamicRef'];

function typeOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value; // 'object', 'string', 'number', 'boolean'
}

function hasType(value, type) {
  const actual = typeOf(value);
  if (type === 'integer') return actual === 'number' && Number.isInteger(value);
  return actual === type;
}

function equal(a, b) {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  if (type === 'array') return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  if (type === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => has(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

function has(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function codePoints(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function pointer(root, ref) {
  if (!ref.startsWith('#')) throw new Error(`only local $ref is supported, not ${ref}`);
  let node = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !has(node, key)) {
      throw new Error(`$ref ${ref} does not resolve`);
    }
    node = node[key];
  }
  return node;
}

const patterns = new Map();
function regex(source) {
  let compiled = patterns.get(source);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(source, 'u'); // code points, as JSON Schema means
    } catch {
      compiled = new RegExp(source); // a pattern only the legacy syntax accepts, such as \-
    }
    patterns.set(source, compiled);
  }
  return compiled;
}

function where(path) {
  return '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

// The first violation of `schema` by `value`, as "at $.path: message", or null.
function check(schema, value, path, root) {
  if (schema === true) return null;
  if (schema === false) return `at ${where(path)}: no value is allowed here`;
  const fail = (message) => `at ${where(path)}: ${message}`;
  for (const keyword of UNSUPPORTED) {
    if (has(schema, keyword)) return fail(`${keyword} is not supported by this validator`);
  }
  if (has(schema, '$ref')) {
    const problem = check(pointer(root, schema.$ref), value, path, root);
    if (problem) return problem;
  }
  if (has(schema, 'type')) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      return fail(`${JSON.stringify(value)} is not of type ${types.join(', ')}`);
    }
  }
  if (has(schema, 'enum') && !schema.enum.some((item) => equal(item, value))) {
    return fail(`${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (has(schema, 'const') && !equal(schema.const, value)) {
    return fail(`${JSON.stringify(schema.const)} was expected`);
  }
  const problem =
    typeOf(value) === 'object'
      ? object(schema, value, path, root, fail)
      : typeOf(value) === 'array'
        ? array(schema, value, path, root, fail)
        : typeof value === 'string'
          ? string(schema, value, fail)
          : typeof value === 'number'
            ? number(schema, value, fail)
            : null;
  return problem || applicators(schema, value, path, root, fail);
}

function object(schema, value, path, root, fail) {
  const keys = Object.keys(value);
  for (const name of schema.required || []) {
    if (!has(value, name)) return fail(`${JSON.stringify(name)} is a required property`);
  }
  if (has(schema, 'minProperties') && keys.length < schema.minProperties) {
    return fail(`fewer than ${schema.minProperties} properties`);
  }
  if (has(schema, 'maxProperties') && keys.length > schema.maxProperties) {
    return fail(`more than ${schema.maxProperties} properties`);
  }
  for (const [name, needed] of Object.entries(schema.dependentRequired || {})) {
    if (has(value, name)) {
      const missing = needed.find((other) => !has(value, other));
      if (missing !== undefined) return fail(`${JSON.stringify(missing)} is required with ${name}`);
    }
  }
  const properties = schema.properties || {};
  const patternEntries = Object.entries(schema.patternProperties || {});
  for (const key of keys) {
    const at = [...path, key];
    let matched = false;
    if (has(properties, key)) {
      matched = true;
      const problem = check(properties[key], value[key], at, root);
      if (problem) return problem;
    }
    for (const [source, sub] of patternEntries) {
      if (regex(source).test(key)) {
        matched = true;
        const problem = check(sub, value[key], at, root);
        if (problem) return problem;
      }
    }
    if (!matched && has(schema, 'additionalProperties')) {
      if (schema.additionalProperties === false) {
        return fail(`additional property ${JSON.stringify(key)} is not allowed`);
      }
      const problem = check(schema.additionalProperties, value[key], at, root);
      if (problem) return problem;
    }
    if (has(schema, 'propertyNames')) {
      const problem = check(schema.propertyNames, key, at, root);
      if (problem) return problem;
    }
  }
  return null;
}

function array(schema, value, path, root, fail) {
  if (has(schema, 'minItems') && value.length < schema.minItems) {
    return fail(`should have at least ${schema.minItems} items`);
  }
  if (has(schema, 'maxItems') && value.length > schema.maxItems) {
    return fail(`should have at most ${schema.maxItems} items`);
  }
  if (schema.uniqueItems === true) {
    for (let i = 0; i < value.length; i += 1) {
      for (let j = i + 1; j < value.length; j += 1) {
        if (equal(value[i], value[j])) return fail('has non-unique items');
      }
    }
  }
  const prefix = schema.prefixItems || [];
  for (let i = 0; i < value.length; i += 1) {
    const sub = i < prefix.length ? prefix[i] : has(schema, 'items') ? schema.items : true;
    const problem = check(sub, value[i], [...path, i], root);
    if (problem) return problem;
  }
  if (has(schema, 'contains')) {
    const count = value.filter((item) => check(schema.contains, item, path, root) === null).length;
    const least = has(schema, 'minContains') ? schema.minContains : 1;
    if (count < least) return fail(`should contain at least ${least} matching items`);
    if (has(schema, 'maxContains') && count > schema.maxContains) {
      return fail(`should contain at most ${schema.maxContains} matching items`);
    }
  }
  return null;
}

function string(schema, value, fail) {
  if (has(schema, 'minLength') && codePoints(value) < schema.minLength) {
    return fail(`${JSON.stringify(value)} is shorter than ${schema.minLength}`);
  }
  if (has(schema, 'maxLength') && codePoints(value) > schema.maxLength) {
    return fail(`${JSON.stringify(value)} is longer than ${schema.maxLength}`);
  }
  if (has(schema, 'pattern') && !regex(schema.pattern).test(value)) {
    return fail(`${JSON.stringify(value)} does not match ${JSON.stringify(schema.pattern)}`);
  }
  return null;
}

function number(schema, value, fail) {
  if (has(schema, 'minimum') && value < schema.minimum) {
    return fail(`${value} is less than the minimum of ${schema.minimum}`);
  }
  if (has(schema, 'maximum') && value > schema.maximum) {
    return fail(`${value} is greater than the maximum of ${schema.maximum}`);
  }
  if (has(schema, 'exclusiveMinimum') && value <= schema.exclusiveMinimum) {
    return fail(`${value} is not above ${schema.exclusiveMinimum}`);
  }
  if (has(schema, 'exclusiveMaximum') && value >= schema.exclusiveMaximum) {
    return fail(`${value} is not below ${schema.exclusiveMaximum}`);
  }
  if (has(schema, 'multipleOf') && !Number.isInteger(value / schema.multipleOf)) {
    return fail(`${value} is not a multiple of ${schema.multipleOf}`);
  }
  return null;
}

function applicators(schema, value, path, root, fail) {
  for (const sub of schema.allOf || []) {
    const problem = check(sub, value, path, root);
    if (problem) return problem;
  }
  if (has(schema, 'anyOf') && !schema.anyOf.some((sub) => !check(sub, value, path, root))) {
    return fail('is not valid under any of the given schemas');
  }
  if (has(schema, 'oneOf')) {
    const valid = schema.oneOf.filter((sub) => !check(sub, value, path, root)).length;
    if (valid !== 1) return fail(`is valid under ${valid} of the oneOf schemas, not exactly one`);
  }
  if (has(schema, 'not') && !check(schema.not, value, path, root)) {
    return fail('should not be valid under the "not" schema');
  }
  if (has(schema, 'if')) {
    const branch = check(schema.if, value, path, root) ? schema.else : schema.then;
    if (branch !== undefined) return check(branch, value, path, root);
  }
  return null;
}

// A validator for a tool's parameters: a function from a value to its first violation, or null.
function compile(schema) {
  return (value) => check(schema, value, [], schema);
}

module.exports = { compile };
