# step: a real gripper tested itself (SimReady's FET028 on the CPU), then planned with joint values
G=examples/grippers/prismatic_two_finger.usda:/PrismaticGripper/palm/tcp
echo "\$ usdgrip evaluate --gripper-test $G -o out/fet028_prismatic.json"
usdgrip evaluate --gripper-test "$G" -o out/fet028_prismatic.json && status=0 || status=$?
echo "(exit $status)"
echo "\$ usdgrip plan examples/mug.usda --object /Mug --gripper $G --max-candidates 3 -o out/mug_prismatic.yaml -q"
usdgrip plan examples/mug.usda --object /Mug --gripper "$G" --max-candidates 3 \
    -o out/mug_prismatic.yaml -q
echo "# the Grasp Editor's fields: object_frame, gripper_frame, cspace_position, pregrasp_cspace_position"
grep -E "^(object_frame|gripper_frame)|cspace_position" out/mug_prismatic.yaml | head -4
