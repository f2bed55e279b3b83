import cProfile, os, sys, time
sys.path.insert(0, os.environ["CRP_ROOT"])
from crp_ui import shell
out = os.environ.get("CRP_PROF_OUT")
if out and os.environ.get("CRP_PROF_ON") == "1":
    p = cProfile.Profile()
    t = time.perf_counter()
    p.enable()
    try:
        shell.run()
    finally:
        p.disable()
        p.dump_stats(out)
        with open(out + ".ms", "a") as fh:
            fh.write(f"{(time.perf_counter()-t)*1e3:.1f}\n")
else:
    shell.run()
