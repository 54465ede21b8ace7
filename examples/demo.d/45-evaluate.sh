# step: usdgrip evaluate --targets — the tote's two-handed 'carry' group: both hands close and lift together
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --count 20 -o out/tote_carry.json"
usdgrip sample examples/tote.usda --prim /Tote --count 20 -o out/tote_carry.json
echo "\$ usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --targets out/tote_carry.json --table --trials 2 --show 3 -o out/tote_carry_evaluated.json"
usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
    --targets out/tote_carry.json --table --trials 2 --show 3 -o out/tote_carry_evaluated.json 2>/dev/null
echo "(at the gripper's gripper:maxGripForce, 235 N per finger; now at 50 N, both hands, then the left hand alone)"
echo "\$ usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --targets out/tote_carry.json --table --trials 2 --force 50 --show 0 -o out/tote_carry_50n.json"
usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
    --targets out/tote_carry.json --table --trials 2 --force 50 --show 0 -o out/tote_carry_50n.json 2>/dev/null
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --slots left_edge --count 20 -o out/tote_left.json"
usdgrip sample examples/tote.usda --prim /Tote --slots left_edge --count 20 -o out/tote_left.json
echo "\$ usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --targets out/tote_left.json --table --trials 2 --force 50 --show 0 -o out/tote_left_50n.json"
usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
    --targets out/tote_left.json --table --trials 2 --force 50 --show 0 -o out/tote_left_50n.json \
    2>/dev/null && status=0 || status=$?
echo "(exit $status: one hand at 50 N does not lift the tote)"
