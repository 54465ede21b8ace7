# step: usdgrip evaluate --targets — the tote's two-handed 'carry' group: both hands close and lift together
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --count 20 -o out/tote_carry.json"
usdgrip sample examples/tote.usda --prim /Tote --count 20 -o out/tote_carry.json
echo "\$ usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp --targets out/tote_carry.json --table --trials 2 --show 5 -o out/tote_carry_evaluated.json"
usdgrip evaluate examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
    --targets out/tote_carry.json --table --trials 2 --show 5 -o out/tote_carry_evaluated.json 2>/dev/null
echo "\$ usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp --grasps out/mug_grasps.yaml --table --trials 3 --friction 0.4 --show 3 -o out/mug_grasps_mu04.yaml"
usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \
    --grasps out/mug_grasps.yaml --table --trials 3 --friction 0.4 --show 3 \
    -o out/mug_grasps_mu04.yaml 2>/dev/null && status=0 || status=$?
echo "(exit $status)"
