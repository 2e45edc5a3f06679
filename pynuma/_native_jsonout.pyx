# cython: language_level=3
"""Native JSON writer for ``pynuma topology`` (twin of ``pynuma._pure_jsonout``).

The same text as the twin, byte for byte: ``json.dumps(value, indent,
ensure_ascii=False)`` except that a container holding only scalars takes
one line, and lone surrogates are escaped.  The text is built as UTF-8 in
one growing C buffer and decoded once at the end.
"""
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdio cimport snprintf
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index)
    long long PyLong_AsLongLongAndOverflow(object o, int *overflow) except? -1
    int Py_EnterRecursiveCall(const char *where) noexcept
    void Py_LeaveRecursiveCall()


cdef struct Buf:
    char *data
    size_t len
    size_t cap


cdef int reserve(Buf *b, size_t extra) except -1:
    cdef size_t cap
    cdef char *grown
    if b.cap - b.len >= extra:
        return 0
    cap = b.cap if b.cap else 16384
    while cap - b.len < extra:
        cap *= 2
    grown = <char *>realloc(b.data, cap)
    if grown == NULL:
        raise MemoryError()
    b.data = grown
    b.cap = cap
    return 0


cdef inline int put(Buf *b, const char *s, size_t n) except -1:
    if b.cap - b.len < n:
        reserve(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline int put_char(Buf *b, char ch) except -1:
    if b.cap == b.len:
        reserve(b, 1)
    b.data[b.len] = ch
    b.len += 1
    return 0


cdef int put_pad(Buf *b, bint comma, Py_ssize_t spaces) except -1:
    """``,`` (when ``comma``), a newline and ``spaces`` blanks."""
    reserve(b, <size_t>spaces + 2)
    if comma:
        b.data[b.len] = b','
        b.len += 1
    b.data[b.len] = b'\n'
    b.len += 1
    memset(b.data + b.len, b' ', <size_t>spaces)
    b.len += <size_t>spaces
    return 0


cdef const char *HEX = b"0123456789abcdef"


cdef int put_escaped(Buf *b, unsigned int ch) except -1:
    """Code point ``ch`` as JSON writes it inside a string (``ensure_ascii=False``), lone surrogates escaped."""
    cdef char u[6]
    if ch == 0x22:  # "
        return put(b, b'\\"', 2)
    if ch == 0x5C:  # backslash
        return put(b, b'\\\\', 2)
    if ch < 0x20 or 0xD800 <= ch <= 0xDFFF:
        if ch == 0x0A:
            return put(b, b'\\n', 2)
        if ch == 0x0D:
            return put(b, b'\\r', 2)
        if ch == 0x09:
            return put(b, b'\\t', 2)
        if ch == 0x08:
            return put(b, b'\\b', 2)
        if ch == 0x0C:
            return put(b, b'\\f', 2)
        u[0] = b'\\'
        u[1] = b'u'
        u[2] = HEX[(ch >> 12) & 15]
        u[3] = HEX[(ch >> 8) & 15]
        u[4] = HEX[(ch >> 4) & 15]
        u[5] = HEX[ch & 15]
        return put(b, u, 6)
    if ch < 0x80:
        return put_char(b, <char>ch)
    reserve(b, 4)
    if ch < 0x800:
        b.data[b.len] = <char>(0xC0 | (ch >> 6))
        b.data[b.len + 1] = <char>(0x80 | (ch & 0x3F))
        b.len += 2
    elif ch < 0x10000:
        b.data[b.len] = <char>(0xE0 | (ch >> 12))
        b.data[b.len + 1] = <char>(0x80 | ((ch >> 6) & 0x3F))
        b.data[b.len + 2] = <char>(0x80 | (ch & 0x3F))
        b.len += 3
    else:
        b.data[b.len] = <char>(0xF0 | (ch >> 18))
        b.data[b.len + 1] = <char>(0x80 | ((ch >> 12) & 0x3F))
        b.data[b.len + 2] = <char>(0x80 | ((ch >> 6) & 0x3F))
        b.data[b.len + 3] = <char>(0x80 | (ch & 0x3F))
        b.len += 4
    return 0


cdef int put_str(Buf *b, object s) except -1:
    """A JSON string (``s`` is a str or a subclass)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i
    cdef const unsigned char *ascii
    cdef int kind
    cdef void *data
    cdef unsigned char c
    put_char(b, b'"')
    if PyUnicode_IS_ASCII(s):
        ascii = <const unsigned char *>PyUnicode_DATA(s)
        reserve(b, <size_t>n)
        for i in range(n):
            c = ascii[i]
            if c < 0x20 or c == 0x22 or c == 0x5C:
                put_escaped(b, c)
            else:
                put_char(b, <char>c)
    else:
        kind = PyUnicode_KIND(s)
        data = PyUnicode_DATA(s)
        for i in range(n):
            put_escaped(b, <unsigned int>PyUnicode_READ(kind, data, i))
    return put_char(b, b'"')


cdef int put_int(Buf *b, object v) except -1:
    cdef int overflow = 0
    cdef long long n
    cdef char digits[24]
    cdef int w
    if type(v) is not int:
        v = int(v)  # a subclass (an IntEnum) is written as its value
    n = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow:
        text = str(v).encode("ascii")
        return put(b, text, len(text))
    w = snprintf(digits, sizeof(digits), "%lld", n)
    return put(b, digits, <size_t>w)


cdef int put_scalar(Buf *b, object v) except -1:
    if v is None:
        return put(b, b"null", 4)
    if v is True:
        return put(b, b"true", 4)
    if v is False:
        return put(b, b"false", 5)
    if isinstance(v, int):
        return put_int(b, v)
    if isinstance(v, str):
        return put_str(b, v)
    if isinstance(v, float):
        if v != v or v == float("inf") or v == float("-inf"):
            raise ValueError(f"cannot encode {v!r} as JSON")
        text = repr(v).encode("ascii")
        return put(b, text, len(text))
    raise TypeError(f"cannot encode {type(v).__name__} as JSON")


cdef int put_key(Buf *b, object k) except -1:
    """A key as json writes it: non-string keys (numbers, booleans, None) become strings."""
    if isinstance(k, str):
        return put_str(b, k)
    if k is None or isinstance(k, (int, float)):  # bool is an int
        put_char(b, b'"')
        put_scalar(b, k)
        return put_char(b, b'"')
    raise TypeError(f"cannot encode key {k!r} as JSON")


cdef int enter_nested() except -1:
    """Count a level of nesting against the interpreter's recursion limit (RecursionError beyond it)."""
    if Py_EnterRecursiveCall(" while writing JSON"):
        return -1  # the error is set
    return 0


cdef inline bint is_container(object v):
    return isinstance(v, (dict, list, tuple))


cdef bint all_scalars(object values) except -1:
    for v in values:
        if is_container(v):
            return False
    return True


cdef bint dict_of_scalars(dict d):
    cdef Py_ssize_t pos = 0
    cdef PyObject *k
    cdef PyObject *v
    while PyDict_Next(d, &pos, &k, &v):
        if is_container(<object>v):
            return False
    return True


cdef int put_record(Buf *b, dict d) except -1:
    """A dict (exactly) of scalars on one line."""
    cdef Py_ssize_t pos = 0
    cdef PyObject *k
    cdef PyObject *v
    cdef bint first = True
    put_char(b, b'{')
    while PyDict_Next(d, &pos, &k, &v):
        if not first:
            put(b, b", ", 2)
        first = False
        put_key(b, <object>k)
        put(b, b": ", 2)
        put_scalar(b, <object>v)
    return put_char(b, b'}')


cdef int put_block(Buf *b, object v, bint is_dict, Py_ssize_t indent, Py_ssize_t level) except -1:
    """A non-empty dict or list holding a container: one item per line, indented."""
    cdef bint first = True
    enter_nested()
    try:
        put_char(b, b'{' if is_dict else b'[')
        for item in (v.items() if is_dict else v):
            put_pad(b, not first, indent * (level + 1))
            first = False
            if is_dict:
                put_key(b, item[0])
                put(b, b": ", 2)
                item = item[1]
            put_value(b, item, indent, level + 1)
    finally:
        Py_LeaveRecursiveCall()
    put_pad(b, False, indent * level)
    return put_char(b, b'}' if is_dict else b']')


cdef int put_value(Buf *b, object v, Py_ssize_t indent, Py_ssize_t level) except -1:
    cdef bint first = True
    if isinstance(v, dict):
        if not v:
            return put(b, b"{}", 2)
        if type(v) is not dict:
            v = dict(v.items())  # a subclass: the items it gives, as the twin reads them
        if dict_of_scalars(<dict>v):
            return put_record(b, <dict>v)
        return put_block(b, v, True, indent, level)
    if isinstance(v, (list, tuple)):
        if not v:
            return put(b, b"[]", 2)
        if not all_scalars(v):
            return put_block(b, v, False, indent, level)
        put_char(b, b'[')
        for item in v:
            if not first:
                put(b, b", ", 2)
            first = False
            put_scalar(b, item)
        return put_char(b, b']')
    return put_scalar(b, v)


def warm_up() -> None:
    """Get ready to write a big value (nothing to do here: the twin imports json's C encoder)."""


def dumps(value, int indent=2) -> str:
    """JSON text of ``value`` (dicts, lists, str, int, float, bool, None), indented.

    Containers holding only scalars take one line.
    """
    cdef Buf b
    b.data = NULL
    b.len = b.cap = 0
    if indent < 0:
        raise ValueError("indent must be >= 0")
    try:
        put_value(&b, value, indent, 0)
        return PyUnicode_DecodeUTF8(b.data, <Py_ssize_t>b.len, NULL)
    finally:
        free(b.data)
