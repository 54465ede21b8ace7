# step: usdgrip plan --evaluate — collision-checked grasps for the mug and the tote, then grasp-and-lift in MuJoCo
for object in mug:/Mug tote:/Tote; do
    name=${object%%:*}
    prim=${object#*:}
    echo "\$ usdgrip plan examples/$name.usda --object $prim --gripper examples/gripper.usda:/Gripper/tcp --max-candidates 50 -o out/${name}_grasps.yaml --show 4 --evaluate --table --trials 2"
    usdgrip plan "examples/$name.usda" --object "$prim" \
        --gripper examples/gripper.usda:/Gripper/tcp \
        --max-candidates 50 --seed 0 -o "out/${name}_grasps.yaml" --show 4 \
        --evaluate --table --trials 2 2>/dev/null && status=0 || status=$?
    echo "(exit $status)"
done
echo "(the tote's slots are a two-handed group, left out of single-gripper planning: next step)"
echo "\$ head -n 24 out/mug_grasps.yaml"
head -n 24 out/mug_grasps.yaml
