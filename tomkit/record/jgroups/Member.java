// One JGroups member for tomkit's recorder (tomkit/record/jgroups/recorder.py).
//
// java -cp jgroups.jar:. Member NAME STACK.xml joins the cluster "tomkit" with the protocol
// stack in STACK.xml and prints what happens to it on stdout, one JSON object a line, in
// the order it happens here (this member's local order, one lock for the callbacks and the
// sender): "view" (viewAccepted: view id and members), "send" (just before
// JChannel.send), "deliver" (receive). stdin: "go COUNT PAUSE_MS" sends COUNT messages
// "NAME.k" to the group, one every PAUSE_MS milliseconds; "quit" closes the channel.
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.ReceiverAdapter;
import org.jgroups.View;

public class Member extends ReceiverAdapter {
    private final String name;

    Member(String name) {
        this.name = name;
    }

    static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    @Override
    public void receive(Message msg) {
        emit(String.format("{\"ev\":\"deliver\",\"time\":%.3f,\"from\":\"%s\",\"msg\":\"%s\"}",
                now(), msg.getSrc(), msg.getObject()));
    }

    @Override
    public void viewAccepted(View view) {
        List<String> members = new ArrayList<>();
        for (Address a : view.getMembers()) members.add("\"" + a + "\"");
        emit(String.format("{\"ev\":\"view\",\"time\":%.3f,\"view\":\"%s|%d\",\"members\":[%s]}",
                now(), view.getViewId().getCoordAddress(), view.getViewId().getId(),
                String.join(",", members)));
    }

    public static void main(String[] args) throws Exception {
        Member me = new Member(args[0]);
        JChannel ch = new JChannel(new File(args[1]));
        ch.setName(args[0]);
        ch.setReceiver(me);
        ch.connect("tomkit");
        me.emit(String.format("{\"ev\":\"ready\",\"time\":%.3f}", now()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("quit")) break;
            if (!w[0].equals("go")) continue;
            int count = Integer.parseInt(w[1]);
            long pause = Long.parseLong(w[2]);
            for (int k = 0; k < count; k++) {
                String id = me.name + "." + k;
                // logged before the send, so it precedes any delivery of it here
                me.emit(String.format("{\"ev\":\"send\",\"time\":%.3f,\"msg\":\"%s\"}",
                        now(), id));
                ch.send(new Message(null, null, id));
                Thread.sleep(pause);
            }
            me.emit(String.format("{\"ev\":\"done\",\"time\":%.3f}", now()));
        }
        ch.close();
    }
}
