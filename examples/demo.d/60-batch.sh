# step: usdgrip batch — validate every example in worker processes, resumable; plan grasps per object
rm -f out/batch.jsonl
echo "\$ usdgrip batch validate examples/ --out out/batch.jsonl"
usdgrip batch validate examples/ --out out/batch.jsonl && status=0 || status=$?
echo "(exit $status: the broken examples fail, as intended)"
echo "\$ head -n 1 out/batch.jsonl   # one JSON line per file"
head -n 1 out/batch.jsonl | cut -c 1-300
echo "\$ usdgrip batch validate examples/ --out out/batch.jsonl --resume --format json   # nothing changed: nothing runs"
usdgrip batch validate examples/ --out out/batch.jsonl --resume --format json \
    | python3 -c 'import json, sys; s = json.load(sys.stdin); print({k: s[k] for k in ("files", "ran", "resumed", "ok", "failed", "errors")})' \
    || true
echo "\$ usdgrip batch plan examples/ --glob '[mt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp --out-dir out/batch_grasps --max-candidates 20"
usdgrip batch plan examples/ --glob '[mt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp \
    --out-dir out/batch_grasps --max-candidates 20 && status=0 || status=$?
echo "(exit $status)"
ls out/batch_grasps
