# moat mcp's Python driver: a persistent interpreter whose protocol runs on
# its own descriptors, never on stdout. Requests arrive on fd 3, results
# leave on fd 4, each a 4-byte big-endian length and a JSON object. What
# the code prints (fd 1 and 2, its subprocesses' too) is captured per call
# into temporary files and sent back, bounded, inside the result, so
# printed text can never be read as a result. Each request carries a nonce
# that its result echoes.
import ast, json, os, struct, sys, tempfile, traceback

REQ, RES = 3, 4
CAP = 131072
os.set_inheritable(REQ, False)
os.set_inheritable(RES, False)


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(REQ, n - len(buf))
        if not chunk:
            os._exit(0)
        buf += chunk
    return buf


def write_frame(obj):
    data = json.dumps(obj, ensure_ascii=True).encode("ascii")
    data = struct.pack(">I", len(data)) + data
    while data:
        n = os.write(RES, data)
        data = data[n:]


def take(f):
    size = f.seek(0, 2)
    f.seek(0)
    b = f.read(CAP)
    f.seek(0)
    f.truncate()
    return b.decode("utf-8", "replace"), size > CAP


def main():
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    out_f = tempfile.TemporaryFile()
    err_f = tempfile.TemporaryFile()
    saved_out, saved_err = os.dup(1), os.dup(2)
    for fd in (saved_out, saved_err):
        os.set_inheritable(fd, False)
    while True:
        (n,) = struct.unpack(">I", read_exact(4))
        if n > 64 << 20:
            os._exit(2)
        req = json.loads(read_exact(n).decode("utf-8"))
        nonce, code = req["nonce"], req["code"]
        status, value, error = "ok", None, ""
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out_f.fileno(), 1)
        os.dup2(err_f.fileno(), 2)
        try:
            tree = ast.parse(code, "<run_python>", "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<run_python>", "exec"), ns)
            if last is not None:
                v = eval(compile(last, "<run_python>", "eval"), ns)
                if v is not None:
                    value = repr(v)[:CAP]
        except BaseException:
            status = "error"
            etype, e, tb = sys.exc_info()
            # The driver's own frame is not the code's: leave it out.
            error = "".join(traceback.format_exception(etype, e, tb.tb_next))[-CAP:]
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                pass
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
        out, out_cut = take(out_f)
        err, err_cut = take(err_f)
        write_frame({"nonce": nonce, "status": status, "value": value, "error": error,
                     "stdout": out, "stderr": err, "stdout_truncated": out_cut, "stderr_truncated": err_cut})


main()
