# step: the same rules inside NVIDIA's validator and OpenUSD's UsdValidation
f=examples/broken/GR.003-gripper-grip-line.usda
echo "\$ nvidia_usd_validate --requirement GR.003 $f"
if command -v nvidia_usd_validate >/dev/null; then
    nvidia_usd_validate --requirement GR.003 "$f" 2>&1 | grep -E "GR\.003" || true
else  # the NVIDIA adapter is optional: one line, the rest of the demo runs
    echo "(no nvidia_usd_validate here: pip install 'usdgrip[nvidia]')"
fi
echo "\$ eval \"\$(usdgrip env)\"; python -c '...UsdValidation.ValidationContext(keywords=[\"usdgrip\"])...' $f"
(
    eval "$(usdgrip env)"
    python - "$f" <<'PY'
import sys
from pxr import Usd, UsdValidation  # no `import usdgrip`: only the environment above

stage = Usd.Stage.Open(sys.argv[1])
for error in UsdValidation.ValidationContext(keywords=["usdgrip"]).Validate(stage):
    sites = error.GetSites()
    where = sites[0].GetPrim().GetPath() if sites and sites[0].GetPrim() else "/"
    print(f"  {error.GetIdentifier()}  {error.GetType().displayName}  <{where}>")
PY
)
