# step: usdgrip suggest — a bare pan (no slots) to physics-proven slots in an edits layer, validated, sampled and evaluated; a bare prop to proven grasp lines; a two-handed group for the tote one hand cannot lift
rm -f out/pan.edits.usda
echo "\$ usdgrip info examples/pan.usda   # bare: no slots, no lines"
usdgrip info examples/pan.usda
cmd="usdgrip suggest slots examples/pan.usda --object /Pan --gripper examples/gripper.usda:/Gripper/tcp --table --layer out/pan.edits.usda"
echo "\$ $cmd"
$cmd
echo "\$ usdgrip validate out/pan.edits.usda"
usdgrip validate out/pan.edits.usda
echo "\$ usdgrip sample out/pan.edits.usda --prim /Pan --count 2 --format text"
usdgrip sample out/pan.edits.usda --prim /Pan --count 2 --format text
cmd="usdgrip plan out/pan.edits.usda --object /Pan --gripper examples/gripper.usda:/Gripper/tcp --method slots --max-candidates 6 --evaluate --table --show 3 -o out/pan_slot_grasps.yaml"
echo "\$ $cmd"
$cmd
cmd="usdgrip suggest lines examples/bare_prop.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp --max-lines 2 -o out/prop.lines.usda"
echo "\$ $cmd   # a bare graspable prop made FET005-ready"
$cmd
echo "\$ usdgrip evaluate --lines out/prop.lines.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp"
usdgrip evaluate --lines out/prop.lines.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp
rm -f out/tote.edits.usda
cmd="usdgrip suggest slots examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --table --force 50 --candidates 60 --layer out/tote.edits.usda"
echo "\$ $cmd   # one hand at 50 N"
$cmd 2>&1 | grep -v '^warning' && status=0 || status=$?
echo "(exit $status: it says so, and suggests --hands 2)"
cmd="usdgrip suggest slots examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --table --force 50 --candidates 60 --hands 2 --group lift --layer out/tote.edits.usda"
echo "\$ $cmd   # two hands closing together"
$cmd
echo "\$ usdgrip validate out/tote.edits.usda"
usdgrip validate out/tote.edits.usda
