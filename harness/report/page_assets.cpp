// timeline.html's style sheet and scripts (see report/page_assets.h).
#include "report/page_assets.h"

namespace locklab {

const char* const kTimelineStyle = R"CSS(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2937;background:#fff}
header{padding:10px 16px;background:#f8fafc;border-bottom:1px solid #e5e7eb;display:flex;gap:18px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:18px;margin:0}
.badge{padding:2px 10px;border-radius:10px;color:#fff;font-weight:600}
.badge.valid{background:#16a34a}.badge.invalid{background:#dc2626}.badge.unknown{background:#d97706}
.meta{color:#4b5563;font-size:13px}
main{padding:8px 16px}
section{margin:10px 0}
h2{font-size:15px;margin:8px 0 6px}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #e5e7eb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f4f6}
td.valid{color:#15803d}td.invalid{color:#b91c1c;font-weight:600}td.unknown{color:#b45309}
.tops{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
#violations{flex:1 1 380px;min-width:0}
#violations summary{cursor:pointer;font-size:14px;margin:8px 0 4px}
#violations ol{margin:0;padding-left:22px;font-size:13px;max-height:120px;overflow:auto}
#violations .first{font-size:13px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#violations li{margin:2px 0}#violations li.on{background:#fee2e2}
#violations .cause{color:#6b7280}
a{color:#1d4ed8}
.toolbar{display:flex;gap:8px;align-items:center;font-size:13px;flex-wrap:wrap;margin-bottom:4px}
.toolbar button{font-size:12px;padding:2px 8px}
#view{font-family:ui-monospace,monospace;color:#374151}
.legend span{display:inline-block;width:12px;height:10px;margin:0 3px 0 10px;vertical-align:middle;border-radius:2px}
.hint{color:#6b7280}
#tl-wrap{position:relative;border:1px solid #d1d5db;border-radius:4px}
#tl{display:block;width:100%;cursor:grab;outline:none}
#tl.dragging{cursor:grabbing}
#tip{position:absolute;display:none;pointer-events:none;background:rgba(17,24,39,.95);color:#f9fafb;font-size:12px;padding:6px 8px;border-radius:4px;max-width:520px;z-index:2;white-space:pre-wrap;font-family:ui-monospace,monospace}
#details{font-size:12px;font-family:ui-monospace,monospace;white-space:pre-wrap;background:#f9fafb;border:1px solid #e5e7eb;padding:6px 8px;min-height:16px;margin-top:4px}
.charts svg{max-width:100%;height:auto;border:1px solid #e5e7eb;margin:2px 4px 2px 0;cursor:crosshair}
#faults table{font-size:12px}
</style>)CSS";

const char* const kTimelineErrorHook = R"JS(<script>
(function(){var errors=[];function note(m){errors.push(String(m));var s=document.getElementById('state');if(s)s.dataset.errors=errors.join(' | ');}
window.addEventListener('error',function(e){note(e.message||'error');});
window.addEventListener('unhandledrejection',function(e){note('unhandled rejection: '+e.reason);});})();
</script>)JS";

const char* const kTimelineScript = R"JS(<script>
(function(){'use strict';
var T0=performance.now(),D=JSON.parse(document.getElementById('data').textContent);
var S=D.strs,state=document.getElementById('state');
var canvas=document.getElementById('tl'),ctx=canvas.getContext('2d',{willReadFrequently:true});
var tip=document.getElementById('tip'),details=document.getElementById('details');
var LABEL_W=118,AXIS_H=40,ROW_H=18,GROUP_H=16,RIGHT_PAD=10,MIN_SPAN_US=5;
var F_COLOUR={acquire:'#94a3b8',release:'#0ea5e9',extend:'#a855f7',write:'#10b981',read:'#14b8a6',lost:'#ef4444','lost-ignored':'#f97316'};
// Rows, with a header above each group.
// The row height shrinks (down to ROW_H_MIN) so that every row fits in the window below the
// canvas's top: the whole run is on the first screen; at the minimum the page scrolls.
// Rows below a label's height are labelled every few rows (labelEvery), the rest by position.
var ROW_H_MAX=18,ROW_H_MIN=4,rowY=[],groups=[],HEIGHT=0;
function layout(){var n=0,last=null;D.rows.forEach(function(r){if(r[1]!==last){n++;last=r[1];}});
var top=canvas.getBoundingClientRect().top+window.scrollY,room=window.innerHeight-top-AXIS_H-n*GROUP_H-8;
ROW_H=Math.max(ROW_H_MIN,Math.min(ROW_H_MAX,Math.floor(room/Math.max(1,D.rows.length))));
rowY=[];groups=[];last=null;var y=AXIS_H;
D.rows.forEach(function(r){if(r[1]!==last){groups.push([r[1],y]);y+=GROUP_H;last=r[1];}rowY.push(y);y+=ROW_H;});HEIGHT=y+6;}
function rowPart(px18){return Math.round(px18*ROW_H/ROW_H_MAX);}
// Per row: the index range of its holds and ops (both sorted by row, then start) and the
// longest item, so a binary search on start finds everything overlapping a time.
function index(cols){var n=cols.row.length,R=D.rows.length,from=new Int32Array(R),to=new Int32Array(R),longest=new Float64Array(R);
from.fill(-1);for(var i=0;i<n;i++){var r=cols.row[i];if(from[r]<0)from[r]=i;to[r]=i+1;var d=cols.t1[i]-cols.t0[i];if(d>longest[r])longest[r]=d;}
for(var k=0;k<R;k++)if(from[k]<0){from[k]=0;to[k]=0;}return{from:from,to:to,longest:longest,cols:cols};}
var H=index(D.holds),O=index(D.ops);
function firstFrom(ix,r,t){var lo=ix.from[r],hi=ix.to[r],t0=ix.cols.t0,want=t-ix.longest[r];while(lo<hi){var m=(lo+hi)>>1;if(t0[m]<want)lo=m+1;else hi=m;}return lo;}
var evT={},evRow={};for(var q=0;q<D.evt.i.length;q++){evT[D.evt.i[q]]=D.evt.t[q];evRow[D.evt.i[q]]=D.evt.row[q];}
var view={v0:0,v1:Math.max(1,D.span)},selected=-1,pinned=null,hl=new Set(),measure=true;
// The canvas width, read once per drawing: a DOM read per item would dominate a large run.
var CW=canvas.clientWidth||1000,PW=Math.max(50,CW-LABEL_W-RIGHT_PAD);
function plotW(){return PW;}
function px(t){return LABEL_W+(t-view.v0)*plotW()/(view.v1-view.v0);}
function tAt(x){return view.v0+(x-LABEL_W)*(view.v1-view.v0)/plotW();}
function fmt(us){var a=Math.abs(us);if(a>=1e6)return(us/1e6).toFixed(a>=1e7?2:3)+' s';if(a>=1e3)return(us/1e3).toFixed(a>=1e5?1:3)+' ms';return us.toFixed(0)+' µs';}
function tok(off){if(off<0)return '—';if(!D.tokExact)return '?';return(BigInt(D.tokBase)+BigInt(off)).toString();}
function str(k){return k===-2?'(not embedded: too many distinct values)':(k<0?'':S[k]);}
function niceStep(raw){var p=Math.pow(10,Math.floor(Math.log10(raw)));var s=[1,2,5,10];for(var i=0;i<4;i++)if(s[i]*p>=raw)return s[i]*p;return 10*p;}
function setView(v0,v1){var span=Math.max(MIN_SPAN_US,v1-v0),whole=D.span*1.02+MIN_SPAN_US;if(span>whole)span=whole;
var lo=-D.span*0.01,hi=D.span*1.01+MIN_SPAN_US;if(v0<lo)v0=lo;if(v0+span>hi)v0=Math.max(lo,hi-span);view.v0=v0;view.v1=v0+span;publish();schedule();}
// The view and the selection, in #state as soon as they change (drawing waits for a frame).
function publish(){state.dataset.viewStartUs=Math.round(view.v0);state.dataset.viewEndUs=Math.round(view.v1);state.dataset.selected=selected;}
function whole(){setView(-D.span*0.01,D.span*1.01+MIN_SPAN_US);}
// A drawing at the next frame, or after 50 ms when no frame comes (headless browsers stop giving
// frames after load, so a resize there would leave the canvas laid out for the old window).
var pending=false;function schedule(){if(pending)return;pending=true;var go=function(){if(!pending)return;pending=false;draw();};requestAnimationFrame(go);setTimeout(go,50);}
function drawBackground(w){ctx.fillStyle='#fff';ctx.fillRect(0,0,w,HEIGHT);
for(var r=0;r<D.rows.length;r++){ctx.fillStyle=r%2?'#f8fafc':'#fff';ctx.fillRect(0,rowY[r],w,ROW_H);}
ctx.font='600 11px system-ui,sans-serif';groups.forEach(function(g){ctx.fillStyle='#eef2f7';ctx.fillRect(0,g[1],w,GROUP_H);ctx.fillStyle='#334155';ctx.fillText(g[0],6,g[1]+12);});
var fs=Math.min(12,Math.max(8,ROW_H-2)),every=Math.max(1,Math.ceil((fs+1)/ROW_H));ctx.font=fs+'px system-ui,sans-serif';ctx.fillStyle='#111827';ctx.textBaseline='middle';
var labels=0;for(r=0;r<D.rows.length;r+=every){ctx.fillText(fitText(D.rows[r][0],LABEL_W-18),14,rowY[r]+ROW_H/2);labels++;}ctx.textBaseline='alphabetic';state.dataset.rowLabels=labels;}
// A name longer than the label column is cut with an ellipsis instead of running under the plot.
function fitText(text,maxPx){if(ctx.measureText(text).width<=maxPx)return text;var lo=0,hi=text.length;while(lo<hi){var m=(lo+hi+1)>>1;if(ctx.measureText(text.slice(0,m)+'…').width<=maxPx)lo=m;else hi=m-1;}return text.slice(0,lo)+'…';}
function drawAxis(w){var pw=plotW(),step=niceStep((view.v1-view.v0)/Math.max(2,pw/110));ctx.font='11px system-ui,sans-serif';ctx.textAlign='center';
for(var t=Math.ceil(view.v0/step)*step;t<=view.v1;t+=step){var x=px(t);ctx.fillStyle='#e5e7eb';ctx.fillRect(Math.round(x),AXIS_H-4,1,HEIGHT-AXIS_H);ctx.fillStyle='#374151';ctx.textAlign=x>w-RIGHT_PAD-40?'right':'center';ctx.fillText(fmt(t),Math.min(x,w-RIGHT_PAD),12);}
ctx.textAlign='left';}
function clipX(x0,x1){return[Math.max(LABEL_W,x0),Math.min(CW-RIGHT_PAD,x1)];}
// Every band drawn is numbered as in the run charts and the fault table's order: its label when
// it does not overlap the previous one, else its number alone above the band's bar, moved right
// past the previous number (bands that start together get their numbers side by side).
function drawFaults(){var labelEnd=-1,numberEnd=-1,labelled=0;ctx.font='11px system-ui,sans-serif';
D.faults.forEach(function(f,k){if(f.t1<view.v0||f.t0>view.v1)return;var c=clipX(px(f.t0),Math.max(px(f.t1),px(f.t0)+2)),cf=clipX(px(f.tf),c[1]);if(c[1]<=c[0])return;
ctx.fillStyle='rgba(245,158,11,0.10)';ctx.fillRect(c[0],AXIS_H-18,c[1]-c[0],HEIGHT-AXIS_H+18);
if(cf[1]>cf[0]){ctx.fillStyle='rgba(245,158,11,0.12)';ctx.fillRect(cf[0],AXIS_H,cf[1]-cf[0],HEIGHT-AXIS_H);}
f.rows.forEach(function(r){ctx.fillStyle='rgba(234,88,12,0.28)';ctx.fillRect(c[0],rowY[r],c[1]-c[0],ROW_H);});
ctx.fillStyle='#b45309';ctx.fillRect(c[0],AXIS_H-18,Math.max(1,c[1]-c[0]),3);
var label=bandLabel(k,f,c[1]-c[0]-4);ctx.fillStyle='#92400e';
if(label&&c[0]>=labelEnd){ctx.fillText(label,c[0]+2,AXIS_H-5);labelEnd=c[0]+ctx.measureText(label).width+10;}else{ctx.font='9px system-ui,sans-serif';var nx=Math.max(c[0]+1,numberEnd);ctx.fillText(String(k+1),nx,AXIS_H-20);numberEnd=nx+ctx.measureText(String(k+1)).width+3;ctx.font='11px system-ui,sans-serif';}labelled++;});
state.dataset.bandsLabelled=labelled;}
// A band's label cut with an ellipsis to the band's width (its whole text is in the band's
// tooltip and details); null when not even its number and one more character fit.
function bandLabel(k,f,roomPx){var label=(k+1)+' '+f.label+(f.status==='healed'?'':' ('+f.status+')'),cut=fitText(label,roomPx);
return cut.length>String(k+1).length+2?cut:null;}
function drawPrimaries(){var P=D.prim;for(var k=0;k<P.length;k++){var p=P[k];if(p[1]<0)continue;var end=k+1<P.length?P[k+1][0]:D.span;
if(end<view.v0||p[0]>view.v1)continue;var c=clipX(px(p[0]),px(end));if(c[1]>c[0]){ctx.fillStyle='rgba(22,163,74,0.18)';ctx.fillRect(c[0],rowY[p[1]]+3,c[1]-c[0],ROW_H-6);}
var x=px(p[0]);if(x>=LABEL_W){ctx.fillStyle='#15803d';ctx.beginPath();ctx.moveTo(x,rowY[p[1]]+2);ctx.lineTo(x+5,rowY[p[1]]+9);ctx.lineTo(x,rowY[p[1]]+16);ctx.lineTo(x-5,rowY[p[1]]+9);ctx.fill();}}}
function hueColour(h){return h<0?'#9ca3af':'hsl('+h+',62%,52%)';}
// Items narrower than a pixel add to a per-pixel coverage instead (aggregation when zoomed out).
function drawItems(ix,top,height,colourOf,aggColour){var pw=plotW(),cols=ix.cols,n=0,cov=new Float32Array(Math.ceil(pw)+2),highlights=[];
for(var r=0;r<D.rows.length;r++){var i=firstFrom(ix,r,view.v0),end=ix.to[r],yy=rowY[r]+top,any=false,lastPoint=-1e9;cov.fill(0);
for(;i<end;i++){var t0=cols.t0[i];if(t0>view.v1)break;var t1=cols.t1[i];if(t1<view.v0)continue;var x0=px(t0),x1=px(t1);n++;
if(hl.size&&(hl.has(cols.ev[i])||(cols.ev2&&hl.has(cols.ev2[i]))))highlights.push([x0,x1,yy]);
if(t1===t0){if(x0-lastPoint>=2&&x0>=LABEL_W){ctx.fillStyle=colourOf(i);ctx.fillRect(x0-1,yy-2,2,height+2);lastPoint=x0;}continue;}
if(x1-x0<1.5){var a=Math.max(0,Math.floor(x0-LABEL_W)),b=Math.min(cov.length-1,Math.floor(x1-LABEL_W));if(a>b)continue;if(a===b)cov[a]+=Math.max(0.35,x1-x0);else for(var k=a;k<=b;k++)cov[k]+=1;any=true;continue;}
var c=clipX(x0,x1);if(c[1]<=c[0])continue;ctx.fillStyle=colourOf(i);ctx.fillRect(c[0],yy,Math.max(1,c[1]-c[0]),height);}
if(any){ctx.fillStyle=aggColour;for(var p=0;p<cov.length;p++){if(cov[p]<=0)continue;var q=p;while(q+1<cov.length&&cov[q+1]>=1&&cov[p]>=1)q++;ctx.globalAlpha=Math.min(1,0.4+0.6*cov[p]);ctx.fillRect(LABEL_W+p,yy,q-p+1,height);p=q;}ctx.globalAlpha=1;}}
highlighted+=highlights.length;ctx.strokeStyle='#111827';ctx.lineWidth=2;highlights.forEach(function(h){var c=clipX(h[0]-2,Math.max(h[1],h[0]+1)+2);ctx.strokeRect(c[0],h[2]-1,Math.max(3,c[1]-c[0]),height+2);});
return n;}
function opColour(i){var o=D.ops.out[i];if(o===3)return '#fb923c';if(o===4||o===0)return '#7c3aed';var f=S[D.ops.f[i]];return Object.prototype.hasOwnProperty.call(F_COLOUR,f)?F_COLOUR[f]:'#64748b';}
function drawMarks(){var n=0;ctx.fillStyle='#475569';D.marks.forEach(function(m){if(m[1]<0||m[0]<view.v0||m[0]>view.v1)return;var x=Math.round(px(m[0]));ctx.fillRect(x,rowY[m[1]]+3,2,ROW_H-6);n++;});return n;}
// The events of the violation shown (or marked on opening) are drawn last, darker and wider,
// so that no other violation's mark covers them.
function drawEvidence(){for(var pass=0;pass<2;pass++)for(var k=0;k<D.evt.i.length;k++){var t=D.evt.t[k];if(t<view.v0||t>view.v1)continue;var x=px(t),r=D.evt.row[k],on=hl.has(D.evt.i[k]);if(on!==(pass===1))continue;
ctx.fillStyle=on?'#991b1b':'rgba(220,38,38,0.75)';if(r>=0)ctx.fillRect(x-(on?1.5:0.5),rowY[r]-2,on?3:1.5,ROW_H+4);
ctx.beginPath();ctx.moveTo(x-(on?5:4),AXIS_H-(on?20:18));ctx.lineTo(x+(on?5:4),AXIS_H-(on?20:18));ctx.lineTo(x,AXIS_H-11);ctx.fill();}}
// Pixels of the plot area that drawing the holds and operations changed: what the browser
// tests read to tell a drawn overview from a blank one.
function plotPixels(){var w=Math.floor(plotW()*dpr),h=Math.floor((HEIGHT-AXIS_H)*dpr);return w>0&&h>0?ctx.getImageData(Math.floor(LABEL_W*dpr),Math.floor(AXIS_H*dpr),w,h).data:null;}
function changed(a,b){if(!a||!b)return 0;var n=0;for(var i=0;i<a.length;i+=4)if(a[i]!==b[i]||a[i+1]!==b[i+1]||a[i+2]!==b[i+2])n++;return n;}
var dpr=1,highlighted=0;
function draw(){layout();dpr=window.devicePixelRatio||1;CW=canvas.clientWidth||CW;PW=Math.max(50,CW-LABEL_W-RIGHT_PAD);var w=CW;canvas.width=Math.floor(w*dpr);canvas.height=Math.floor(HEIGHT*dpr);canvas.style.height=HEIGHT+'px';
ctx.setTransform(dpr,0,0,dpr,0,0);drawBackground(w);ctx.save();ctx.beginPath();ctx.rect(LABEL_W,0,plotW(),HEIGHT);ctx.clip();
drawAxis(w);drawFaults();drawPrimaries();
highlighted=0;var before=measure?plotPixels():null,holds=drawItems(H,rowPart(2),Math.max(3,rowPart(10)),function(i){return hueColour(D.holds.hue[i]);},'#3b82f6');
var ops=drawItems(O,rowPart(13),Math.max(2,rowPart(4)),opColour,'#64748b'),n=holds+ops;state.dataset.drawnHolds=holds;state.dataset.drawnOps=ops;state.dataset.highlighted=highlighted;if(measure){state.dataset.plotInk=changed(before,plotPixels());measure=false;}
state.dataset.drawnMarks=drawMarks();drawEvidence();ctx.restore();drawAxisLabels(w);
document.getElementById('view').textContent=fmt(view.v0)+' … '+fmt(view.v1)+'  (span '+fmt(view.v1-view.v0)+')';
publish();state.dataset.drawnItems=n;
if(!state.dataset.ready){state.dataset.loadMs=Math.round(performance.now());state.dataset.scriptMs=Math.round(performance.now()-T0);}state.dataset.ready='1';
state.dataset.rowTopsPx=rowY.join(',');state.dataset.rowHeightPx=ROW_H;state.dataset.canvasBottomPx=Math.round(canvas.getBoundingClientRect().bottom+window.scrollY);state.dataset.viewportHeightPx=window.innerHeight;}
function drawAxisLabels(){ctx.fillStyle='#6b7280';ctx.font='11px system-ui,sans-serif';ctx.fillText('time from start',6,12);ctx.fillText('faults',6,AXIS_H-5);}
// Hover and click: the item under the pointer, as text.
function rowAt(yy){for(var r=0;r<D.rows.length;r++)if(yy>=rowY[r]&&yy<rowY[r]+ROW_H)return r;return -1;}
function findIn(ix,r,t,tol){var cols=ix.cols,best=-1,bestD=Infinity;for(var i=firstFrom(ix,r,t-tol),end=ix.to[r];i<end&&cols.t0[i]<=t+tol;i++){if(cols.t1[i]<t-tol)continue;var d=(cols.t1[i]-cols.t0[i]);if(t<cols.t0[i])d+=cols.t0[i]-t;if(t>cols.t1[i])d+=t-cols.t1[i];if(d<bestD){bestD=d;best=i;}}return best;}
function holdText(i){var h=D.holds;return 'hold  '+D.rows[h.row[i]][0]+'  lock '+S[h.lock[i]]+'  token '+tok(h.tok[i])+'\nfrom '+fmt(h.t0[i])+' to '+fmt(h.t1[i])+'  ('+fmt(h.t1[i]-h.t0[i])+')\nended by '+S[h.end[i]]+'\nacquire ok: event #'+h.ev[i];}
var OUT=['pending (no completion)','ok','fail','info (outcome unknown)'];
function opText(i){var o=D.ops,outc=o.out[i]===0?OUT[0]:OUT[o.out[i]-1]||String(o.out[i]);var s=o.f[i]>=0?S[o.f[i]]:'?';
var t=s+'  '+D.rows[o.row[i]][0]+(S[o.lock[i]]?'  lock '+S[o.lock[i]]:'')+'  token '+tok(o.tok[i])+'\noutcome: '+outc;
if(o.ev[i]>=0)t+='\ninvoke at '+fmt(o.t0[i])+' (event #'+o.ev[i]+')'+(str(o.note1[i])?'  '+str(o.note1[i]):'');
if(o.ev2[i]>=0)t+='\ncompletion at '+fmt(o.t1[i])+' (event #'+o.ev2[i]+')'+(str(o.note2[i])?'  '+str(o.note2[i]):'');
if(o.ev[i]>=0&&o.ev2[i]>=0)t+='\nlatency '+fmt(o.t1[i]-o.t0[i]);return t;}
function faultText(f){return 'fault window '+f.win+': '+f.label+'\n'+fmt(f.t0)+' intent, '+fmt(f.tf)+' in force, '+fmt(f.t1)+' end\n'+f.status+(f.errors.length?'\nerrors: '+f.errors.join('; '):'');}
function describeAt(x,yy){var r=rowAt(yy),t=tAt(x),tol=4*(view.v1-view.v0)/plotW();if(x<LABEL_W)return null;
if(r>=0){var h=findIn(H,r,t,tol),o=findIn(O,r,t,tol),parts=[];
if(o>=0&&(h<0||yy>=rowY[r]+rowPart(12)))parts.push(opText(o));else if(h>=0)parts.push(holdText(h));
D.marks.forEach(function(m){if(m[1]===r&&Math.abs(m[0]-t)<=tol&&parts.length<4)parts.push('event #'+m[2]+' at '+fmt(m[0])+'\n'+m[3]);});
D.prim.forEach(function(p){if(p[1]===r&&Math.abs(p[0]-t)<=tol)parts.push(p[2]+' observed primary at '+fmt(p[0])+' ('+p[3]+', event #'+p[4]+')');});
if(parts.length)return parts.join('\n\n');}
for(var k=0;k<D.faults.length;k++){var f=D.faults[k];if(t>=f.t0&&t<=f.t1)return faultText(f);}return null;}
// Zoom and pan: wheel zooms around the pointer (shift or a horizontal wheel pans), drag pans,
// keys: + - zoom, arrows pan, 0 whole run, n p next and previous violation.
function zoom(factor,at){var t=at===undefined?(view.v0+view.v1)/2:at;setView(t-(t-view.v0)*factor,t+(view.v1-t)*factor);}
function pan(fraction){var s=view.v1-view.v0;setView(view.v0+s*fraction,view.v1+s*fraction);}
canvas.addEventListener('wheel',function(e){e.preventDefault();var r=canvas.getBoundingClientRect();
if(e.shiftKey||Math.abs(e.deltaX)>Math.abs(e.deltaY))pan((e.deltaX||e.deltaY)/1000);else zoom(Math.exp(e.deltaY*0.0015),tAt(e.clientX-r.left));},{passive:false});
var drag=null;canvas.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:view.v0,v1:view.v1,moved:false};canvas.classList.add('dragging');canvas.focus();});
window.addEventListener('mouseup',function(e){if(!drag)return;var moved=drag.moved;drag=null;canvas.classList.remove('dragging');if(!moved&&e.target===canvas){var r=canvas.getBoundingClientRect(),text=describeAt(e.clientX-r.left,e.clientY-r.top);details.textContent=text||'nothing here';}});
window.addEventListener('mousemove',function(e){var r=canvas.getBoundingClientRect();if(drag){var dx=e.clientX-drag.x;if(Math.abs(dx)>2)drag.moved=true;var dt=dx*(drag.v1-drag.v0)/plotW();setView(drag.v0-dt,drag.v1-dt);tip.style.display='none';return;}
if(e.target!==canvas){tip.style.display='none';return;}var text=describeAt(e.clientX-r.left,e.clientY-r.top);
if(!text){tip.style.display='none';return;}tip.textContent=text;tip.style.display='block';var x=e.clientX-r.left+14;if(x+430>r.width)x=Math.max(0,e.clientX-r.left-440);tip.style.left=x+'px';tip.style.top=(e.clientY-r.top+14)+'px';});
canvas.addEventListener('mouseleave',function(){tip.style.display='none';});
document.addEventListener('keydown',function(e){if(e.target&&/INPUT|TEXTAREA|SELECT/.test(e.target.tagName))return;var k=e.key;
if(k==='+'||k==='='||k==='w')zoom(0.5);else if(k==='-'||k==='s')zoom(2);else if(k==='ArrowLeft'||k==='a')pan(-0.2);else if(k==='ArrowRight'||k==='d')pan(0.2);
else if(k==='0'||k==='Home')whole();else if(k==='n'&&D.viol.length)goViolation((selected+1)%D.viol.length);
else if(k==='p'&&D.viol.length)goViolation(selected<0?D.viol.length-1:(selected-1+D.viol.length)%D.viol.length);else return;e.preventDefault();});
document.getElementById('b-whole').onclick=whole;document.getElementById('b-in').onclick=function(){zoom(0.5);};document.getElementById('b-out').onclick=function(){zoom(2);};
// Violations: zoom to the events that prove one and outline them.
function showViolation(k){var v=D.viol[k];if(!v)return false;var lo=Infinity,hi=-Infinity;v.ev.forEach(function(e){if(evT[e]===undefined)return;lo=Math.min(lo,evT[e]);hi=Math.max(hi,evT[e]);});
selected=k;hl=new Set(v.ev);document.querySelectorAll('#violations li').forEach(function(li){li.classList.toggle('on',li.id==='violation-'+k+'-item');});
var item=document.getElementById('violation-'+k+'-item');details.textContent='violation '+k+' ('+v.p+'): '+v.msg+'\ncause: '+v.cause+'\nevents: '+v.ev.map(function(e){return '#'+e+' at '+fmt(evT[e]);}).join(', ');
if(lo<=hi){var pad=Math.max((hi-lo)*0.25,500);setView(lo-pad,hi+pad);}publish();measure=true;schedule();return true;}
function showFault(k){var f=D.faults[k];if(!f)return false;var pad=Math.max((f.t1-f.t0)*0.15,500);selected=-1;hl=new Set();setView(f.t0-pad,f.t1+pad);details.textContent=faultText(f);return true;}
// A violation by key: its fragment, and shown even when the fragment is already that one (no
// hashchange then: one violation, or n after 0).
function goViolation(k){var h='#violation-'+k;if(location.hash===h)route();else location.hash=h;}
// Opened at a fragment: the view is set in place; a link clicked later also brings the timeline
// into sight.
function route(){var m=/^#violation-(\d+)$/.exec(location.hash),f=/^#fault-(\d+)$/.exec(location.hash);return(m&&showViolation(+m[1]))||(f&&showFault(+f[1]));}
window.addEventListener('hashchange',function(){if(route())document.getElementById('timeline').scrollIntoView({block:'start'});});
// A link to the violation already shown changes no hash: show it again all the same.
document.querySelectorAll('a[href^="#violation-"],a[href^="#fault-"]').forEach(function(a){a.addEventListener('click',function(){if(location.hash===a.getAttribute('href')&&route())document.getElementById('timeline').scrollIntoView({block:'start'});});});
// A click on a run chart centres the timeline on that moment, at a tenth of the run.
document.querySelectorAll('.charts svg').forEach(function(svg){svg.addEventListener('click',function(e){var r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal,x=(e.clientX-r.left)*vb.width/r.width;
var t=(x-52)/(vb.width-52-12)*D.span,s=D.span/10;setView(t-s/2,t+s/2);document.getElementById('timeline').scrollIntoView({block:'start'});});});
window.addEventListener('resize',schedule);
// Opening or closing the violation list moves the canvas: lay it out again at once (headless
// browsers and background tabs give no animation frame).
var list=document.querySelector('#violations details');if(list)list.addEventListener('toggle',function(){draw();});
// Opened without a fragment: the whole run, with the first violation's events marked (nothing
// selected: n goes to it, p to the last).
function markFirst(){var v=D.viol[0];if(!v)return;hl=new Set(v.ev);details.textContent='violation 0 of '+D.viol.length+' ('+v.p+'), marked dark red on the timeline: '+v.msg+'\ncause: '+v.cause+'\nn or its link zooms to it';}
whole();if(!route())markFirst();draw();
})();
</script>)JS";

}  // namespace locklab
